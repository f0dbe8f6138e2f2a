import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';

/** SPEC §17: ids in paths are canonical decimal integers. */
describe.each(engines)('ids in paths on %s', (engine) => {
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });
  const user = useUser(t, { status: 'active' });

  const NON_CANONICAL = ['01', '0x1', '1e0', '1.0', '+1', '%2B1', '1%20', '0b1', ' 1'];

  it('when a user id is spelled other than in canonical decimal, then 400 VALIDATION_ERROR naming `id`, for an admin and for the user themself', async () => {
    for (const spelling of NON_CANONICAL) {
      const id = spelling.replace(/^1/, String(user.id)).replace(/1$/, String(user.id));
      for (const token of [admin.token, user.token]) {
        const res = await t.request({ url: `/api/v1/users/${encodeURI(id)}`, token });
        expect(expectEnvelope(res, 400, 'VALIDATION_ERROR'), `${id}`).toEqual(['id']);
      }
    }
    expect((await t.request({ url: `/api/v1/users/${user.id}`, token: admin.token })).status).toBe(200);
    expect((await t.request({ url: '/api/v1/users/me', token: user.token })).status).toBe(200);
    expect(
      (await t.request({ method: 'PATCH', url: '/api/v1/users/me', token: user.token, payload: { name: 'Me' } }))
        .status,
    ).toBe(200);
  });

  it('when a nested id is not canonical, then 400 naming it; `me` still stands for the caller', async () => {
    const orders = await t.request({ url: `/api/v1/users/me/orders/0${user.id}`, token: user.token });
    expect(expectEnvelope(orders, 400, 'VALIDATION_ERROR')).toEqual(['order_id']);
    const keys = await t.request({ url: `/api/v2/users/0x${user.id.toString(16)}/api-keys/1e0`, token: admin.token });
    expect(expectEnvelope(keys, 400, 'VALIDATION_ERROR')).toEqual(['id', 'key_id']);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${user.id}.0`, token: admin.token })).status).toBe(
      400,
    );
    expect((await t.request({ url: `/api/v1/users/${user.id}`, token: admin.token })).status).toBe(200);
  });
});
