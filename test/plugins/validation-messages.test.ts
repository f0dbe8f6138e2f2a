import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';

// SPEC §12: every validation message names what is allowed (formats with an example, enumerations with their values).
describe.each(engines)('validation messages name what is allowed on %s', (engine) => {
  const t = useTestApp(engine);
  const user = useUser(t);
  const admin = useUser(t, { role: 'admin', status: 'active' });

  const messageOf = (
    res: { body: { error: { details: Array<{ field: string; message: string }> } } },
    field: string,
  ): string => res.body.error.details.find((d) => d.field === field)?.message ?? '';

  it('when expires_at is a date without a time zone, then the message asks for an RFC 3339 date-time with an example', async () => {
    for (const expires of ['2030-01-01', '2030-01-01T00:00:00', 'tomorrow']) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: user.token,
        payload: { original_url: 'https://example.com/m', expires_at: expires },
      });
      expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['expires_at']);
      expect(messageOf(res, 'expires_at')).toMatch(
        /RFC 3339 date-time with a time zone.*e\.g\. 2030-01-01T00:00:00Z.*or null$/,
      );
    }
  });

  it('when a sort field is not one of the allowed, then the message lists them', async () => {
    const res = await t.request({ url: '/api/v1/users?sort=click_count', token: admin.token });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['sort']);
    expect(messageOf(res, 'sort')).toMatch(/^must be one of: .*id.*username.*email.*createdAt/);
    const orders = await t.request({ url: `/api/v1/users/${user.id}/orders?sort=price&order=up`, token: user.token });
    expect(expectEnvelope(orders, 400, 'VALIDATION_ERROR')).toEqual(['order', 'sort']);
    expect(messageOf(orders, 'order')).toMatch(/asc.*desc/);
    expect(messageOf(orders, 'sort')).toMatch(/itemId.*quantity/);
  });

  it('when an enumerated body field or query value is wrong, then its values are listed', async () => {
    const role = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      token: admin.token,
      payload: { role: 'root', status: 'gone' },
    });
    expect(expectEnvelope(role, 400, 'VALIDATION_ERROR')).toEqual(['role', 'status']);
    expect(messageOf(role, 'role')).toBe('must be one of: user, admin');
    expect(messageOf(role, 'status')).toBe('must be one of: pending, active, suspended');
    const link = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: user.token,
      payload: { original_url: 'https://example.com/i' },
    });
    const stats = await t.request({
      url: `/api/v1/links/${link.body.short_code}/stats?interval=year`,
      token: user.token,
    });
    expect(messageOf(stats, 'interval')).toBe('must be one of: hour, day, week, month');
  });

  it('when a nullable number is sent as text, then the message names both allowed types', async () => {
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      token: user.token,
      payload: { age: 'ten' },
    });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['age']);
    expect(messageOf(res, 'age')).toBe('must be integer or null');
  });
});
