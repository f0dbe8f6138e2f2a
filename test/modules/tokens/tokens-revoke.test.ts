import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, login } from '../../helpers/factories.js';
import { decodeJwt } from '../../helpers/jwt.js';

const jtiOf = (token: string): string => String(decodeJwt(token).payload.jti);

/** SPEC §4: revocation is a deny list of jti; DELETE /tokens/{jti} (owner or admin) and /tokens/current. */
describe.each(engines)('token revocation on %s', (engine) => {
  const t = useTestApp(engine);

  const revoke = (jti: string, token: string) => t.request({ method: 'DELETE', url: `/api/v1/tokens/${jti}`, token });
  const me = (token: string) => t.request({ url: '/api/v1/users/me', token });

  it('when the owner revokes a token by jti, then 204, the token is 401, and again 404', async () => {
    const u = await createUser(t);
    const other = await login(t, u.username, u.password);
    const res = await revoke(jtiOf(other), u.token);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await me(other)).status).toBe(401);
    expect((await me(u.token)).status).toBe(200);
    expectEnvelope(await revoke(jtiOf(other), u.token), 404, 'NOT_FOUND');
  });

  it('when the Location of a new token is used for DELETE, then it revokes that token', async () => {
    const u = await createUser(t);
    const issued = await t.request({
      method: 'POST',
      url: '/api/v1/tokens',
      payload: { username: u.username, password: u.password },
    });
    const del = await t.request({ method: 'DELETE', url: String(issued.headers.location), token: u.token });
    expect(del.status).toBe(204);
    expect((await me(issued.body.accessToken)).status).toBe(401);
  });

  it("when another user revokes someone's token, then 403 and the token keeps working", async () => {
    const owner = await createUser(t);
    const intruder = await createUser(t);
    expectEnvelope(await revoke(jtiOf(owner.token), intruder.token), 403, 'FORBIDDEN');
    expect((await me(owner.token)).status).toBe(200);
  });

  it("when an admin revokes a user's token, then 204 and the token is 401", async () => {
    const owner = await createUser(t);
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    expect((await revoke(jtiOf(owner.token), admin.token)).status).toBe(204);
    expect((await me(owner.token)).status).toBe(401);
    expect((await me(admin.token)).status).toBe(200);
  });

  it('when DELETE /tokens/current is sent, then that token is revoked and cannot revoke itself twice', async () => {
    const u = await createUser(t);
    const spare = await login(t, u.username, u.password);
    expect((await t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token: u.token })).status).toBe(204);
    const again = await t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token: u.token });
    expectEnvelope(again, 401, 'UNAUTHENTICATED');
    expect((await me(spare)).status).toBe(200);
    expectEnvelope(await revoke(jtiOf(u.token), spare), 404, 'NOT_FOUND');
  });

  it('when the jti is unknown or malformed, or no token is sent, then 404, 400 or 401', async () => {
    const u = await createUser(t);
    expectEnvelope(await revoke('no-such-token-id', u.token), 404, 'NOT_FOUND');
    expect(expectEnvelope(await revoke('a'.repeat(65), u.token), 400, 'VALIDATION_ERROR')).toEqual(['jti']);
    expect(expectEnvelope(await revoke('bad.jti', u.token), 400, 'VALIDATION_ERROR')).toEqual(['jti']);
    const anon = await t.request({ method: 'DELETE', url: `/api/v1/tokens/${jtiOf(u.token)}` });
    expectEnvelope(anon, 401, 'UNAUTHENTICATED');
    expect((await me(u.token)).status).toBe(200);
  });

  it('when a token has expired, then there is nothing left to revoke: 404', async () => {
    const u = await createUser(t);
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const victim = await login(t, u.username, u.password);
    const exp = decodeJwt(victim).payload.exp as number;
    const start = t.clock.ms;
    try {
      // the admin's own token must outlive the victim's: issue a fresh one after moving the clock
      t.clock.ms = exp * 1000 + 1000;
      const fresh = await login(t, admin.username, admin.password);
      expectEnvelope(await revoke(jtiOf(victim), fresh), 404, 'NOT_FOUND');
    } finally {
      t.clock.ms = start;
    }
  });
});
