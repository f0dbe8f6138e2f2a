import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { malformedPercentEncoding } from '../../src/lib/percent-encoding.js';

// SPEC §12: malformed percent-encoding anywhere in the request target is a 400 naming the parameter.
const BAD = ['%ZZ', '%', '%E0%A4%A', '%u0041', '%C3%28', '%FF'];

describe('malformedPercentEncoding', () => {
  it('when the target is well-formed (escapes, plus signs, no query), then nothing is reported', () => {
    expect(malformedPercentEncoding('/api/v1/links?q=a%20b+c&tag=x%2Fy')).toEqual([]);
    expect(malformedPercentEncoding('/abc')).toEqual([]);
    expect(malformedPercentEncoding('/%E2%82%AC?x=%E2%82%AC')).toEqual([]);
  });

  it('when several parameters are malformed, then each is named once', () => {
    const details = malformedPercentEncoding('/a%ZZ?x=%&y=ok&x=%ZZ&%u0041=1');
    expect(details.map((d) => d.field)).toEqual(['path', 'x', '%u0041']);
  });
});

describe.each(engines)('malformed percent-encoding on %s', (engine) => {
  const t = useTestApp(engine);
  const user = useUser(t);

  it.each(BAD)(
    'when ?version=%s is sent to an unversioned path, then 400 names version and the service still answers',
    async (bad) => {
      const res = await t.request({ url: `/api/users/me?version=${bad}`, token: user.token });
      // An unversioned path's answers name the version served (SPEC §9), errors included.
      expect(res.headers['content-type']).toBe('application/vnd.ferry.v1+json; charset=utf-8');
      expect(res.body.requestId).toBe(res.headers['x-request-id']);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['version']);
      expect(res.body.error.details[0].message).toMatch(/percent-encoding.*%20/);
      const after = await t.request({ url: '/api/users/me', token: user.token });
      expect(after.status).toBe(200);
    },
  );

  it.each(BAD)('when any query value is %s, then 400 names that parameter', async (bad) => {
    const res = await t.request({ url: `/api/v1/users/${user.id}/links?limit=5&q=${bad}`, token: user.token });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['q']);
  });

  it('when a query parameter the route does not know is malformed, then it is named too', async () => {
    const res = await t.request({ url: '/api/v1/users/me?utm_source=%ZZ', token: user.token });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['utm_source']);
  });

  it('when a path parameter is malformed, then 400 names the parameter', async () => {
    const link = await t.request({ url: '/api/v1/links/%ZZ' });
    expect(expectEnvelope(link, 400, 'VALIDATION_ERROR')).toEqual(['code']);
    const stats = await t.request({ url: '/api/v1/links/ab%E0%A4%A/stats' });
    expect(expectEnvelope(stats, 400, 'VALIDATION_ERROR')).toEqual(['code']);
  });

  it('when a static path segment, the redirect or an operational path is malformed, then 400 names the path', async () => {
    for (const url of ['/api/v1/us%ZZers', '/%ZZ', '/ab%', '/healthz?x=%', '/abc?utm=%u0041']) {
      const res = await t.request({ url });
      const fields = expectEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(fields.length).toBe(1);
    }
  });

  it('when a body-carrying request has a malformed query, then nothing is created', async () => {
    const before = await t.storage.db
      .selectFrom('links')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links?x=%ZZ',
      token: user.token,
      payload: { original_url: 'https://example.com/pe' },
    });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['x']);
    const after = await t.storage.db
      .selectFrom('links')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });
});
