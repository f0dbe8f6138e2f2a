import { describe, expect, it } from 'vitest';
import { engines, type ApiResponse } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, login } from '../../helpers/factories.js';
import { decodeJwt, forgeJwt, withHeader, withPayload } from '../../helpers/jwt.js';

/** 401 UNAUTHENTICATED, a Bearer challenge, and error="invalid_token" exactly when a bearer token was sent. */
function expectRejected(res: ApiResponse, tokenSent: boolean, why = ''): void {
  expectEnvelope(res, 401, 'UNAUTHENTICATED');
  const challenge = String(res.headers['www-authenticate']);
  expect(challenge, why).toMatch(/^Bearer( |$)/);
  if (tokenSent) expect(challenge, why).toMatch(/error="invalid_token"/);
  else expect(challenge, why).not.toMatch(/error=/);
}

/** SPEC §4 / RFC 8725: verification pins HS256 and checks revocation and the user's current state. */
describe.each(engines)('token verification on %s', (engine) => {
  const t = useTestApp(engine);

  const me = (token: string) => t.request({ url: '/api/v1/users/me', token });
  const meWith = (authorization: string) => t.request({ url: '/api/v1/users/me', headers: { authorization } });

  it('when a good token is sent, then 200; the scheme name is case-insensitive', async () => {
    const u = await createUser(t);
    expect((await me(u.token)).body.id).toBe(u.id);
    expect((await meWith(`bearer ${u.token}`)).status).toBe(200);
    expect((await meWith(`BEARER ${u.token}`)).status).toBe(200);
  });

  it('when the header says alg none (with or without a signature), then 401 invalid_token', async () => {
    const u = await createUser(t);
    const { payload } = decodeJwt(u.token);
    expectRejected(await me(forgeJwt({ alg: 'none', typ: 'JWT' }, payload, 'none')), true, 'none');
    expectRejected(
      await me(forgeJwt({ alg: 'none', typ: 'JWT' }, payload, 'none').slice(0, -1)),
      true,
      'none, 2 segments',
    );
    expectRejected(await me(withHeader(u.token, { alg: 'none', typ: 'JWT' })), true, 'none, old signature');
    expectRejected(await me(forgeJwt({ alg: 'None', typ: 'JWT' }, payload, 'none')), true, 'None');
  });

  it('when another algorithm is used or named, then 401 invalid_token', async () => {
    const u = await createUser(t);
    const { payload } = decodeJwt(u.token);
    const secret = t.config.jwtSecret!;
    const cases: Record<string, string> = {
      'HS512 with the right secret': forgeJwt({ alg: 'HS512', typ: 'JWT' }, payload, { hs: 512, secret }),
      'HS384 with the right secret': forgeJwt({ alg: 'HS384', typ: 'JWT' }, payload, { hs: 384, secret }),
      'header HS512, HS256 signature kept': withHeader(u.token, { alg: 'HS512', typ: 'JWT' }),
      'header RS256, HS256 signature kept': withHeader(u.token, { alg: 'RS256', typ: 'JWT' }),
      'RS256 signed with some RSA key': forgeJwt({ alg: 'RS256', typ: 'JWT' }, payload, 'rs256'),
      'RS256 header, HMAC with the secret (key confusion)': forgeJwt({ alg: 'RS256', typ: 'JWT' }, payload, {
        hs: 256,
        secret,
      }),
    };
    for (const [why, token] of Object.entries(cases)) expectRejected(await me(token), true, why);
  });

  it('when the payload is re-signed with another secret or edited under the old signature, then 401', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const { header, payload } = decodeJwt(u.token);
    expectRejected(
      await me(forgeJwt(header, payload, { secret: 'another-secret-that-is-also-32-bytes-long' })),
      true,
      'other secret',
    );
    expectRejected(
      await me(
        forgeJwt(header, { ...payload, role: 'admin' }, { secret: 'another-secret-that-is-also-32-bytes-long' }),
      ),
      true,
      'admin, other secret',
    );
    const asAdmin = withPayload(u.token, { ...payload, role: 'admin' });
    expectRejected(await me(asAdmin), true, 'role admin, old signature');
    expectRejected(await t.request({ url: '/api/v1/users', token: asAdmin }), true, 'role admin on the admin listing');
    expectRejected(await me(withPayload(u.token, { ...payload, user_id: other.id })), true, 'other user_id');
    expectRejected(
      await me(withPayload(u.token, { ...payload, exp: (payload.exp as number) + 86400 })),
      true,
      'longer exp',
    );
    const sig = u.token.split('.')[2]!;
    expectRejected(
      await me(`${u.token.slice(0, -sig.length)}${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`),
      true,
      'signature altered',
    );
  });

  it('when a correctly signed token lacks required claims or has malformed ones, then 401', async () => {
    const u = await createUser(t);
    const { header, payload } = decodeJwt(u.token);
    const secret = t.config.jwtSecret!;
    for (const drop of ['exp', 'jti', 'iat', 'user_id']) {
      const p = { ...payload };
      delete p[drop];
      expectRejected(await me(forgeJwt(header, p, { secret })), true, `without ${drop}`);
    }
    expectRejected(
      await me(forgeJwt(header, { ...payload, user_id: String(u.id) }, { secret })),
      true,
      'user_id as string',
    );
    expectRejected(await me(forgeJwt({ alg: 'HS256' }, payload, { secret })), true, 'no typ');
  });

  it('when the token is malformed, then 401 invalid_token', async () => {
    const u = await createUser(t);
    const [h, p] = u.token.split('.') as [string, string];
    for (const token of [
      'garbage',
      `${h}.${p}`,
      `${h}.${p}.sig.extra`,
      `${h}!.${p}.x`,
      '...',
      `e30.${p}.x`,
      'a.b.c',
      `${h}.bm90IGpzb24.x`,
      'x'.repeat(5000),
    ]) {
      expectRejected(await me(token), true, token.slice(0, 40));
    }
    expectRejected(await meWith(`Bearer ${u.token} extra`), true, 'two tokens');
    expectRejected(await meWith('Bearer'), true, 'no token after Bearer');
  });

  // Verified tokens are remembered by their exact text (jwt.ts): near-copies of a remembered token must not pass.
  it('when a token has just been accepted, then its near-copies (signature or payload changed) are still 401', async () => {
    const u = await createUser(t);
    expect((await me(u.token)).status).toBe(200);
    const [h, p, sig] = u.token.split('.') as [string, string, string];
    const flipped = sig.slice(0, -2) + (sig.at(-2) === 'A' ? 'B' : 'A') + sig.at(-1)!;
    expectRejected(await me(`${h}.${p}.${flipped}`), true, 'signature changed');
    expectRejected(
      await me(withPayload(u.token, { ...decodeJwt(u.token).payload, user_id: u.id + 1 })),
      true,
      'payload changed',
    );
    expect((await me(u.token)).status).toBe(200);
  });

  it('when the token has expired, then 401 past the 30 s leeway and 200 within it', async () => {
    const u = await createUser(t);
    const token = await login(t, u.username, u.password);
    const exp = decodeJwt(token).payload.exp as number;
    const start = t.clock.ms;
    try {
      t.clock.ms = exp * 1000 + 29_000;
      expect((await me(token)).status).toBe(200);
      t.clock.ms = exp * 1000 + 31_000;
      const res = await me(token);
      expectRejected(res, true, 'expired');
      expect(res.headers['www-authenticate']).toMatch(/expired/);
    } finally {
      t.clock.ms = start;
    }
  });

  it('when one token of a user is revoked, then it is 401 while another live token of the same user still works', async () => {
    const u = await createUser(t);
    const second = await login(t, u.username, u.password);
    expect((await t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token: u.token })).status).toBe(204);
    expectRejected(await me(u.token), true, 'revoked');
    expect((await me(second)).status).toBe(200);
  });

  it('when the user was deleted or suspended, then their token is 401', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const gone = await createUser(t);
    const suspended = await createUser(t, { status: 'active' });
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${gone.id}`, token: admin.token })).status).toBe(
      204,
    );
    expectRejected(await me(gone.token), true, 'deleted');
    const s = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${suspended.id}`,
      token: admin.token,
      payload: { status: 'suspended' },
    });
    expect(s.status).toBe(200);
    expectRejected(await me(suspended.token), true, 'suspended');
  });

  it('when an admin is demoted, then the old token (claiming admin) no longer works at all (SPEC §12), and a new one has user rights', async () => {
    const root = await createUser(t, { role: 'admin', status: 'active' });
    const other = await createUser(t, { role: 'admin', status: 'active' });
    expect((await t.request({ url: '/api/v1/users', token: other.token })).status).toBe(200);
    expect(
      (
        await t.request({
          method: 'PATCH',
          url: `/api/v1/users/${other.id}`,
          token: root.token,
          payload: { role: 'user' },
        })
      ).status,
    ).toBe(200);
    expectEnvelope(await t.request({ url: '/api/v1/users', token: other.token }), 401, 'UNAUTHENTICATED');
    const fresh = await login(t, other.username, other.password);
    expectEnvelope(await t.request({ url: '/api/v1/users', token: fresh }), 403, 'FORBIDDEN');
  });

  it('when no bearer token is sent (none, Basic, or only in the query string), then 401 without error=', async () => {
    const u = await createUser(t);
    expectRejected(await t.request({ url: '/api/v1/users/me' }), false, 'none');
    expect((await t.request({ url: '/api/v1/users/me' })).headers['www-authenticate']).toBe('Bearer realm="ferry"');
    expectRejected(
      await meWith(`Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}`),
      false,
      'Basic',
    );
    expectRejected(await t.request({ url: `/api/v1/users/me?access_token=${u.token}` }), false, 'query string');
    // On an open route an admin's token in the query string is ignored: the caller stays anonymous and may
    // not create an admin (with the same token in the header, they may).
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const body = (suffix: string) => ({
      username: `${u.username.slice(0, 28)}_${suffix}`,
      email: `${suffix}.${u.email}`,
      password: 'long-enough-pw',
      role: 'admin',
    });
    expectEnvelope(
      await t.request({ method: 'POST', url: `/api/v1/users?access_token=${admin.token}`, payload: body('q') }),
      403,
      'FORBIDDEN',
    );
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/users', token: admin.token, payload: body('h') })).status,
    ).toBe(201);
  });
});
