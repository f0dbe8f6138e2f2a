import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { SCOPES } from '../../../src/lib/scopes.js';
import { createUser } from '../../helpers/factories.js';
import { postOrder } from '../orders/orders.helpers.js';
import { createApiKey, keysUrl } from './api-keys.helpers.js';

const ALL: string[] = [...SCOPES];

describe.each(engines)('using an API key on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a key is sent as a bearer credential, then it acts as its user', async () => {
    const u = await createUser(t, { status: 'active' });
    const { key } = await createApiKey(t, u, ['users:read', 'links:write', 'orders:write']);
    const me = await t.request({ url: '/api/v1/users/me', token: key });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: u.id, username: u.username });
    const link = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: key,
      payload: { original_url: 'https://example.com/by-key' },
    });
    expect(link.status).toBe(201);
    expect(link.body.user_id).toBe(u.id);
    const order = await postOrder(t, { token: key }, { itemId: 7, quantity: 1 });
    expect(order.status).toBe(201);
    expect(order.body.userId).toBe(u.id);
  });

  it('when a key lacks the scope an operation needs, then 403 INSUFFICIENT_SCOPE naming it, and nothing is done', async () => {
    const u = await createUser(t, { status: 'active' });
    const { key } = await createApiKey(t, u, ['links:read']);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: key,
      payload: { original_url: 'https://example.com/no-scope' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('INSUFFICIENT_SCOPE');
    expect(res.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="links:write"');
    const links = await t.request({ url: `/api/v1/users/${u.id}/links`, token: key });
    expect(links.status).toBe(200);
    expect(links.body.data).toEqual([]);
    const order = await postOrder(t, { token: key }, { itemId: 1, quantity: 1 });
    expect(order.status).toBe(403);
    expect(order.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="orders:write"');
    // Scope comes before ownership: another user's data is refused for the scope, not looked at.
    const other = await createUser(t);
    const theirs = await t.request({ url: `/api/v1/users/${other.id}/orders`, token: key });
    expect(theirs.body.error.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('when a key is used where only a JWT will do, then 403 FORBIDDEN: no keys from keys, no account or token changes', async () => {
    const u = await createUser(t, { status: 'active' });
    const { key, id } = await createApiKey(t, u, ALL);
    const attempts = [
      { method: 'POST' as const, url: keysUrl(u.id), payload: { name: 'child', scopes: ['links:read'] } },
      { method: 'DELETE' as const, url: `${keysUrl(u.id)}/${id}` },
      { method: 'PATCH' as const, url: `/api/v1/users/${u.id}`, payload: { name: 'Mallory' } },
      { method: 'PUT' as const, url: `/api/v1/users/${u.id}`, payload: { username: u.username, email: u.email } },
      { method: 'DELETE' as const, url: `/api/v1/users/${u.id}` },
      { method: 'DELETE' as const, url: '/api/v1/tokens/current' },
      {
        method: 'POST' as const,
        url: '/api/v1/users',
        payload: { username: 'bykey', email: 'bykey@example.com', password: 'long enough pw' },
      },
    ];
    for (const attempt of attempts) {
      const res = await t.request({ ...attempt, token: key });
      expect(res.status, `${attempt.method} ${attempt.url}`).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    expect((await t.request({ url: `/api/v1/users/${u.id}`, token: key })).body.name).toBeNull();
    expect((await t.request({ url: keysUrl(u.id), token: key })).body.data).toHaveLength(1);
  });

  it("when the key's user is an admin, then the key acts as admin, and as soon as the user is demoted it does not", async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const { key } = await createApiKey(t, admin, ['users:read']);
    expect((await t.request({ url: '/api/v1/users', token: key })).status).toBe(200);
    await t.storage.db.updateTable('users').set({ role: 'user' }).where('id', '=', admin.id).execute();
    const res = await t.request({ url: '/api/v1/users', token: key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it("when the key's user is pending, then the key orders no more than the user could (422)", async () => {
    const u = await createUser(t);
    const { key } = await createApiKey(t, u, ['orders:write']);
    await t.storage.db.updateTable('users').set({ status: 'pending' }).where('id', '=', u.id).execute();
    const res = await postOrder(t, { token: key }, { itemId: 1, quantity: 1 });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('ACCOUNT_NOT_ACTIVE');
  });

  it('when the user is suspended or deleted, or the key expired or is not a key at all, then 401 invalid_token', async () => {
    const suspended = await createUser(t, { status: 'active' });
    const s = await createApiKey(t, suspended, ['users:read']);
    await t.storage.db.updateTable('users').set({ status: 'suspended' }).where('id', '=', suspended.id).execute();

    const deleted = await createUser(t, { status: 'active' });
    const d = await createApiKey(t, deleted, ['users:read']);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/users/${deleted.id}`, token: deleted.token })).status,
    ).toBe(204);

    const expiring = await createUser(t, { status: 'active' });
    const e = await createApiKey(t, expiring, ['users:read'], {
      expires_at: new Date(t.clock.now() + 60_000).toISOString(),
    });
    expect((await t.request({ url: '/api/v1/users/me', token: e.key })).status).toBe(200);
    t.clock.advance(60_000);

    const forged = `fry_${'A'.repeat(40)}`;
    for (const [key, message] of [
      [s.key, 'suspended'],
      [d.key, 'revoked'],
      [e.key, 'expired'],
      [forged, 'invalid'],
      ['fry_short', 'invalid'],
      [`${s.key}x`, 'invalid'],
    ] as const) {
      const res = await t.request({ url: '/api/v1/users/me', token: key });
      expect(res.status, key).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHENTICATED');
      expect(res.body.error.message).toContain(message);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="ferry", error="invalid_token"/);
    }
  });

  it('when a key is used, then last_used_at shows it, moves at most once a minute, and requests do not write it one by one', async () => {
    const u = await createUser(t, { status: 'active' });
    const { id, key } = await createApiKey(t, u, ['users:read']);
    const read = async () =>
      (await t.request({ url: `${keysUrl(u.id)}/${id}`, token: u.token })).body.last_used_at as string | null;
    const stored = async () =>
      (await t.storage.db.selectFrom('api_keys').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow())
        .last_used_at;
    expect(await read()).toBeNull();
    const firstUse = t.clock.now();
    for (let i = 0; i < 20; i += 1) {
      expect((await t.request({ url: '/api/v1/users/me', token: key })).status).toBe(200);
      t.clock.advance(1_000);
    }
    expect(await read()).toBe(new Date(firstUse).toISOString()); // 20 uses in 20 s: one recorded use
    t.clock.advance(40_000);
    const later = t.clock.now();
    expect((await t.request({ url: '/api/v1/users/me', token: key })).status).toBe(200);
    expect(await stored()).toBe(firstUse); // noted in memory, not written by the request
    expect(await read()).toBe(new Date(later).toISOString());
  });
});

describe.each(engines)('rate limits with API keys on %s', (engine) => {
  const t = useTestApp(engine, { env: { RATE_LIMIT_PER_MINUTE: '5' } });

  it("when one key has used up its quota, then that key gets 429 while the user's other key and JWT keep theirs", async () => {
    const u = await createUser(t, { status: 'active' }); // sign-up and login count against the address
    const a = await createApiKey(t, u, ['users:read']);
    const b = await createApiKey(t, u, ['users:read']); // the JWT has used 2 of its 5
    for (let i = 0; i < 5; i += 1)
      expect((await t.request({ url: '/api/v1/users/me', token: a.key })).status).toBe(200);
    const limited = await t.request({ url: '/api/v1/users/me', token: a.key });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect((await t.request({ url: '/api/v1/users/me', token: b.key })).status).toBe(200);
    expect((await t.request({ url: '/api/v1/users/me', token: u.token })).status).toBe(200);
  });

  it('when made-up keys are sent, then they count against the address, not a bucket of their own each', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      const res = await t.request({
        url: '/api/v1/users/me',
        token: `fry_${String(i).padStart(40, 'z')}`,
        remoteAddress: '10.9.8.7',
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });
});
