import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { codeAt, enableTotp, signIn } from './two-factor.helpers.js';

/** SPEC §23: TOTP_REQUIRED_FOR_ADMINS=true. */
describe.each(engines)('two-factor required of admins on %s', (engine) => {
  const t = useTestApp(engine, { env: { TOTP_REQUIRED_FOR_ADMINS: 'true' } });

  it('when an admin without two-factor calls anything, then 403 TOTP_SETUP_REQUIRED, except setting it up, reading who they are and signing out', async () => {
    const admin = await createUser(t, { role: 'admin' });
    expectEnvelope(await t.request({ url: '/api/v1/users', token: admin.token }), 403, 'TOTP_SETUP_REQUIRED');
    expect((await t.request({ url: '/api/v1/users/me', token: admin.token })).status).toBe(200); // who is signed in
    expectEnvelope(
      await t.request({ url: `/api/v1/users/${admin.id}`, token: admin.token }),
      403,
      'TOTP_SETUP_REQUIRED',
    );
    const link = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: admin.token,
      payload: { original_url: 'https://example.com/x' },
    });
    expectEnvelope(link, 403, 'TOTP_SETUP_REQUIRED'); // an optional-token route too
    const key = await t.request({
      method: 'POST',
      url: '/api/v1/users/me/api-keys',
      token: admin.token,
      payload: { name: 'k', scopes: ['links:read'] },
    });
    expectEnvelope(key, 403, 'TOTP_SETUP_REQUIRED');

    await enableTotp(t, admin); // set-up and confirmation stay open
    expect((await t.request({ url: '/api/v1/users', token: admin.token })).status).toBe(200);
  });

  it('when a user who is no admin has no two-factor, then nothing is refused', async () => {
    const u = await createUser(t);
    expect((await t.request({ url: '/api/v1/users/me', token: u.token })).status).toBe(200);
  });

  it('when such an admin signs out, then 204', async () => {
    const admin = await createUser(t, { role: 'admin' });
    const res = await t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token: admin.token });
    expect(res.status).toBe(204);
  });

  it('when the admin turns two-factor off again, then everything but the set-up is refused again', async () => {
    const admin = await createUser(t, { role: 'admin' });
    const { secret } = await enableTotp(t, admin);
    const token = (await signIn(t, admin, codeAt(secret, t.clock.now()))).body.accessToken as string;
    t.clock.advance(30_000);
    const off = await t.request({
      method: 'DELETE',
      url: '/api/v1/users/me/totp',
      token,
      payload: { code: codeAt(secret, t.clock.now()) },
    });
    expect(off.status).toBe(204);
    expectEnvelope(await t.request({ url: '/api/v1/users', token }), 403, 'TOTP_SETUP_REQUIRED');
  });
});
