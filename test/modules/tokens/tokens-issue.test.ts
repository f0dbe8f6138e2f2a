import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { countRows, ISO_UTC, usersFingerprint } from '../../helpers/db-state.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { decodeJwt, forgeJwt } from '../../helpers/jwt.js';

const TTL = 900;

/** SPEC §4: POST /api/v1/tokens. */
describe.each(engines)('token issuance on %s', (engine) => {
  const t = useTestApp(engine, { env: { TOKEN_TTL_SECONDS: String(TTL) } });

  const issue = (username: string, password: string) =>
    t.request({ method: 'POST', url: '/api/v1/tokens', payload: { username, password } });

  it('when the credentials are right, then 201 with Location /api/v1/tokens/{jti} and the token body', async () => {
    const u = await createUser(t);
    const before = await countRows(t, 'tokens');
    const res = await issue(u.username, u.password);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['accessToken', 'expiresAt', 'expiresIn', 'tokenType']);
    expect(res.body.tokenType).toBe('Bearer');
    expect(res.body.expiresIn).toBe(TTL);
    expect(res.body.expiresAt).toMatch(ISO_UTC);
    expect(res.headers['cache-control']).toBe('no-store');

    const jwt = decodeJwt(res.body.accessToken);
    expect(jwt.header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(Object.keys(jwt.payload).sort()).toEqual(['exp', 'iat', 'jti', 'role', 'user_id']);
    expect(jwt.payload).toMatchObject({ user_id: u.id, role: 'user' });
    expect(jwt.payload.iat).toBe(Math.floor(t.clock.now() / 1000));
    expect(jwt.payload.exp).toBe((jwt.payload.iat as number) + TTL);
    expect(res.body.expiresAt).toBe(new Date((jwt.payload.exp as number) * 1000).toISOString());
    expect(res.headers.location).toBe(`/api/v1/tokens/${jwt.payload.jti}`);
    expect(String(jwt.payload.jti)).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
    expect(await countRows(t, 'tokens')).toBe(before + 1);
  });

  it('when the token is checked independently, then it is an HS256 signature with the configured secret', async () => {
    const u = await createUser(t);
    const { accessToken } = (await issue(u.username, u.password)).body as { accessToken: string };
    const { header, payload } = decodeJwt(accessToken);
    expect(forgeJwt(header, payload, { hs: 256, secret: t.config.jwtSecret! })).toBe(accessToken);
  });

  it('when the same user logs in twice, then two different jti; username is matched ignoring case', async () => {
    const u = await createUser(t);
    const a = decodeJwt((await issue(u.username, u.password)).body.accessToken);
    const b = decodeJwt((await issue(u.username.toUpperCase(), u.password)).body.accessToken);
    expect(a.payload.jti).not.toBe(b.payload.jti);
    expect(b.payload.user_id).toBe(u.id);
  });

  it('when the password is wrong or the user does not exist, then the same 401 answer', async () => {
    const u = await createUser(t);
    const wrong = await issue(u.username, 'not-the-password');
    const missing = await issue(`${u.username}x`, 'not-the-password');
    const wrongCase = await issue(u.username, u.password.toUpperCase());
    for (const res of [wrong, missing, wrongCase]) {
      expectEnvelope(res, 401, 'UNAUTHENTICATED');
      expect(res.headers.location).toBeUndefined();
    }
    const strip = (r: typeof wrong) => ({
      status: r.status,
      error: r.body.error,
      www: r.headers['www-authenticate'],
      type: r.headers['content-type'],
    });
    expect(strip(missing)).toEqual(strip(wrong));
    expect(strip(wrongCase)).toEqual(strip(wrong));
    expect(wrong.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(wrong.headers['www-authenticate']).not.toMatch(/error=/);
  });

  it('when the account is suspended, then 403 with the right password and the same 401 with a wrong one', async () => {
    const u = await createUser(t, { status: 'suspended' });
    expectEnvelope(await issue(u.username, u.password), 403, 'FORBIDDEN');
    const wrong = await issue(u.username, 'not-the-password');
    expectEnvelope(wrong, 401, 'UNAUTHENTICATED');
  });

  it('when the account is pending or active, then a token is issued', async () => {
    for (const status of ['pending', 'active'] as const) {
      const u = await createUser(t, { status });
      expect((await issue(u.username, u.password)).status).toBe(201);
    }
  });

  it('when the body is invalid, then 400 naming the fields and no token row and no user change', async () => {
    const tokens = await countRows(t, 'tokens');
    const users = await usersFingerprint(t);
    expect(
      expectEnvelope(await t.request({ method: 'POST', url: '/api/v1/tokens', payload: {} }), 400, 'VALIDATION_ERROR'),
    ).toEqual(['password', 'username']);
    expect(
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: '/api/v1/tokens',
          payload: { username: 'a', password: 'b', grant_type: 'password' },
        }),
        400,
        'VALIDATION_ERROR',
      ),
    ).toEqual(['grant_type']);
    expect(
      expectEnvelope(
        await t.request({ method: 'POST', url: '/api/v1/tokens', payload: { username: 1, password: ['x'] } }),
        400,
        'VALIDATION_ERROR',
      ),
    ).toEqual(['password', 'username']);
    expect(await countRows(t, 'tokens')).toBe(tokens);
    expect(await usersFingerprint(t)).toBe(users);
  });

  it('when odd characters are sent as a username, then 401 or 400, never a 5xx', async () => {
    for (const username of ['a\u0000b', '\u0000', 'ü'.repeat(200), "' or 1=1 --", '%', '\ud800', 'a'.repeat(254)]) {
      const res = await issue(username, 'whatever-password');
      expect([400, 401], JSON.stringify(username)).toContain(res.status);
    }
  });
});
