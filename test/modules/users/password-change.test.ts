import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, login } from '../../helpers/factories.js';
import { createApiKey } from '../api-keys/api-keys.helpers.js';
import { createPasswordHasher } from '../../../src/modules/users/password.js';
import { TEST_PASSWORD_HASH_COST } from '../../helpers/server-process.js';

// SPEC §12: changing one's own password needs the current one; a password, role or status change revokes
// every token issued before it (API keys follow the user's current state, SPEC §14); a login rehashes.
describe.each(engines)('password changes and token revocation on %s', (engine) => {
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });

  const me = (token: string) => t.request({ url: '/api/v1/users/me', token });
  const hashOf = async (id: number): Promise<string> =>
    (await t.storage.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow())
      .password_hash;

  it('when a user changes their own password without currentPassword, or with a wrong one, then 400 / 403 and nothing changes', async () => {
    const u = await createUser(t, { status: 'active' });
    const before = await hashOf(u.id);
    const missing = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { password: 'a-new-password-1' },
    });
    expect(expectEnvelope(missing, 400, 'VALIDATION_ERROR')).toEqual(['currentPassword']);
    const wrong = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { password: 'a-new-password-1', currentPassword: 'not-my-password' },
    });
    expect(expectEnvelope(wrong, 403, 'FORBIDDEN')).toEqual(['currentPassword']);
    const put = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { username: u.username, email: u.email, password: 'a-new-password-1' },
    });
    expect(expectEnvelope(put, 400, 'VALIDATION_ERROR')).toEqual(['currentPassword']);
    expect(await hashOf(u.id)).toBe(before);
    expect((await me(u.token)).status).toBe(200);
  });

  it('when a user changes their own password with the current one, then every earlier token is 401, a new login works and API keys keep working', async () => {
    const u = await createUser(t, { status: 'active' });
    const second = await login(t, u.username, u.password);
    const key = await createApiKey(t, u, ['users:read']);
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { password: 'a-new-password-1', currentPassword: u.password },
    });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('currentPassword');
    for (const old of [u.token, second]) {
      const refused = await me(old);
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/invalid_token/);
    }
    const fresh = await login(t, u.username, 'a-new-password-1');
    expect((await me(fresh)).status).toBe(200);
    expect((await me(key.key)).status).toBe(200);
    const oldPassword = await t.request({
      method: 'POST',
      url: '/api/v1/tokens',
      payload: { username: u.username, password: u.password },
    });
    expect(oldPassword.status).toBe(401);
  });

  it("when an admin changes another user's password, role or status, then no currentPassword is needed and that user's earlier tokens are 401", async () => {
    const changes: Array<{ password?: string; role?: string; status?: string }> = [
      { password: 'set-by-the-admin-1' },
      { role: 'admin' },
      { status: 'pending' },
    ];
    for (const change of changes) {
      const u = await createUser(t, { status: 'active' });
      const res = await t.request({
        method: 'PATCH',
        url: `/api/v1/users/${u.id}`,
        token: admin.token,
        payload: change,
      });
      expect(res.status, JSON.stringify(change)).toBe(200);
      expect((await me(u.token)).status, JSON.stringify(change)).toBe(401);
      const again = await login(t, u.username, change.password ?? u.password);
      expect((await me(again)).status).toBe(200);
    }
    expect((await me(admin.token)).status).toBe(200);
  });

  it('when a change touches neither password, role nor status (or sets them to what they are), then tokens stay valid', async () => {
    const u = await createUser(t, { status: 'active' });
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: admin.token,
      payload: { name: 'Renamed', role: 'user', status: 'active' },
    });
    expect(res.status).toBe(200);
    expect((await me(u.token)).status).toBe(200);
  });

  it('when a user whose hash has an older cost logs in, then the login succeeds and the hash is redone at the current cost', async () => {
    const u = await createUser(t, { status: 'active' });
    const old = await createPasswordHasher(Number(TEST_PASSWORD_HASH_COST) - 2).hash(u.password);
    await t.storage.db.updateTable('users').set({ password_hash: old }).where('id', '=', u.id).execute();
    const wrong = await t.request({
      method: 'POST',
      url: '/api/v1/tokens',
      payload: { username: u.username, password: 'wrong-password-1' },
    });
    expect(wrong.status).toBe(401);
    expect(await hashOf(u.id)).toBe(old);
    const token = await login(t, u.username, u.password);
    expect((await me(token)).status).toBe(200);
    const now = await hashOf(u.id);
    expect(now.split('$')[1]).toBe(String(2 ** Number(TEST_PASSWORD_HASH_COST)));
    expect(await login(t, u.username, u.password)).toEqual(expect.any(String));
    const user = await me(token);
    expect(user.body.version).toBe(1);
  });
});
