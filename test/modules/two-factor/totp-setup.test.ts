import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { codeAt, enableTotp, signIn, STEP_MS } from './two-factor.helpers.js';

/** SPEC §23: POST /users/me/totp, POST /users/me/totp/confirm, DELETE /users/me/totp. */
describe.each(engines)('two-factor set-up on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a user starts the set-up, then a 160-bit secret, its otpauth URL and an SVG QR code, not yet on', async () => {
    const u = await createUser(t);
    const res = await t.request({ method: 'POST', url: '/api/v1/users/me/totp', token: u.token });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Buffer.from(res.body.secret.replace(/=+$/, ''), 'utf8').length).toBe(32); // 32 base32 characters = 160 bits
    expect(res.body.otpauth_url).toMatch(/^otpauth:\/\/totp\/.+secret=[A-Z2-7]{32}/);
    expect(res.body.otpauth_url).toContain(encodeURIComponent(u.username));
    expect(res.body.qr_svg).toMatch(/^<svg [\s\S]*<\/svg>\s*$/);
    expect((await signIn(t, u)).status).toBe(201); // not on until confirmed
    const stored = await t.storage.db
      .selectFrom('user_totp')
      .selectAll()
      .where('user_id', '=', u.id)
      .executeTakeFirst();
    expect(stored?.enabled_at).toBeNull();
    expect(stored?.secret).not.toContain(res.body.secret); // encrypted at rest
  });

  it('when the set-up is confirmed with the current code, then it is on and ten recovery codes are answered once', async () => {
    const u = await createUser(t);
    const { recoveryCodes } = await enableTotp(t, u);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const c of recoveryCodes) expect(c).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    const rows = await t.storage.db
      .selectFrom('user_recovery_codes')
      .select('code_hash')
      .where('user_id', '=', u.id)
      .execute();
    expect(rows).toHaveLength(10);
    for (const r of rows) expect(recoveryCodes.join()).not.toContain(r.code_hash); // stored hashed
    const again = await t.request({ method: 'POST', url: '/api/v1/users/me/totp', token: u.token });
    expectEnvelope(again, 409, 'CONFLICT');
  });

  it('when the confirmation code is wrong, then 400 naming code and it stays off', async () => {
    const u = await createUser(t);
    const setup = await t.request({ method: 'POST', url: '/api/v1/users/me/totp', token: u.token });
    const wrong = String((Number(codeAt(setup.body.secret, t.clock.now())) + 1) % 1_000_000).padStart(6, '0');
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users/me/totp/confirm',
      token: u.token,
      payload: { code: wrong },
    });
    expectEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details[0].field).toBe('code');
    expect((await signIn(t, u)).status).toBe(201);
  });

  it('when there is no set-up to confirm, then 409; a malformed code is 400', async () => {
    const u = await createUser(t);
    const none = await t.request({
      method: 'POST',
      url: '/api/v1/users/me/totp/confirm',
      token: u.token,
      payload: { code: '123456' },
    });
    expectEnvelope(none, 409, 'CONFLICT');
    const bad = await t.request({
      method: 'POST',
      url: '/api/v1/users/me/totp/confirm',
      token: u.token,
      payload: { code: '12<456' },
    });
    expectEnvelope(bad, 400, 'VALIDATION_ERROR');
  });

  it('when no token or an API key is sent, then 401 and 403', async () => {
    const anon = await t.request({ method: 'POST', url: '/api/v1/users/me/totp' });
    expectEnvelope(anon, 401, 'UNAUTHENTICATED');
    const u = await createUser(t);
    const key = await t.request({
      method: 'POST',
      url: '/api/v1/users/me/api-keys',
      token: u.token,
      payload: { name: 'k', scopes: ['links:read'] },
    });
    const res = await t.request({ method: 'POST', url: '/api/v1/users/me/totp', token: key.body.key });
    expectEnvelope(res, 403, 'FORBIDDEN');
  });

  it('when it is turned off with a current code, then sign-in needs the password only again', async () => {
    const u = await createUser(t);
    const { secret } = await enableTotp(t, u);
    const res = await t.request({
      method: 'DELETE',
      url: '/api/v1/users/me/totp',
      token: u.token,
      payload: { code: codeAt(secret, t.clock.now()) },
    });
    expect(res.status).toBe(204);
    expect((await signIn(t, u)).status).toBe(201);
    expect(
      await t.storage.db.selectFrom('user_recovery_codes').select('id').where('user_id', '=', u.id).execute(),
    ).toEqual([]);
  });

  it('when it is turned off with a recovery code, then 204; with a wrong code 400 and it stays on', async () => {
    const u = await createUser(t);
    const { recoveryCodes } = await enableTotp(t, u);
    const wrong = await t.request({
      method: 'DELETE',
      url: '/api/v1/users/me/totp',
      token: u.token,
      payload: { code: '000000' },
    });
    expectEnvelope(wrong, 400, 'VALIDATION_ERROR');
    expectEnvelope(await signIn(t, u), 401, 'TOTP_REQUIRED');
    const res = await t.request({
      method: 'DELETE',
      url: '/api/v1/users/me/totp',
      token: u.token,
      payload: { code: recoveryCodes[3]!.toUpperCase() },
    });
    expect(res.status).toBe(204);
    const off = await t.request({
      method: 'DELETE',
      url: '/api/v1/users/me/totp',
      token: u.token,
      payload: { code: '000000' },
    });
    expectEnvelope(off, 409, 'CONFLICT');
  });

  it('when v2 is asked, then the same in camelCase', async () => {
    const u = await createUser(t);
    const setup = await t.request({ method: 'POST', url: '/api/v2/users/me/totp', token: u.token });
    expect(setup.status).toBe(200);
    expect(Object.keys(setup.body).sort()).toEqual(['otpauthUrl', 'qrSvg', 'secret']);
    const confirm = await t.request({
      method: 'POST',
      url: '/api/v2/users/me/totp/confirm',
      token: u.token,
      payload: { code: codeAt(setup.body.secret, t.clock.now()) },
    });
    expect(confirm.status).toBe(200);
    expect(confirm.body.recoveryCodes).toHaveLength(10);
    t.clock.advance(STEP_MS);
  });
});

/** GET /users/me/totp: what the dashboard's Security screen shows. */
describe.each(engines)('two-factor state on %s', (engine) => {
  const t = useTestApp(engine);

  it('when it is off, on, and a recovery code is used, then the state says so', async () => {
    const u = await createUser(t);
    const off = await t.request({ url: '/api/v1/users/me/totp', token: u.token });
    expect(off.body).toEqual({ enabled: false, enabled_at: null, recovery_codes_left: 0 });
    const { recoveryCodes } = await enableTotp(t, u);
    expect((await signIn(t, u, recoveryCodes[0]!)).status).toBe(201);
    const on = await t.request({ url: '/api/v1/users/me/totp', token: u.token });
    expect(on.body).toMatchObject({ enabled: true, recovery_codes_left: 9 });
  });
});
