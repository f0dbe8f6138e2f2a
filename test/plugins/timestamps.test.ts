import { beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { keysUrl } from '../modules/api-keys/api-keys.helpers.js';

// SPEC §12: timestamps anywhere in the API lie between 1970 and 9999; from/to outside are 400.
const FOUR_DIGIT_YEAR = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe.each(engines)('timestamps between 1970 and 9999 on %s', (engine) => {
  let code: string;
  const t = useTestApp(engine);
  const user = useUser(t);
  beforeAll(async () => {
    const link = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: user.token,
      payload: { original_url: 'https://example.com/ts' },
    });
    code = link.body.short_code;
  });

  it('when stats are asked up to the last instant of 9999, then every timestamp in the answer has a four-digit year', async () => {
    for (const interval of ['day', 'hour']) {
      const res = await t.request({
        url: `/api/v1/links/${code}/stats?from=9999-12-30T00:00:00Z&to=9999-12-31T23:59:59.999Z&interval=${interval}`,
        token: user.token,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.text).not.toContain('+0');
      expect(res.body.to).toMatch(FOUR_DIGIT_YEAR);
      expect(res.body.from).toBe('9999-12-30T00:00:00.000Z');
      for (const b of res.body.timeseries) expect(b.start).toMatch(FOUR_DIGIT_YEAR);
    }
  });

  it.each([
    ['from before 1970', 'from=1969-12-31T23:59:59Z', ['from']],
    ['from in year 0', 'from=0000-01-01T00:00:00Z&to=2000-01-01T00:00:00Z', ['from']],
    ['to past 9999 through its zone', 'to=9999-12-31T23:30:00-01:00', ['to']],
    ['both outside', 'from=1900-01-01T00:00:00Z&to=9999-12-31T23:59:59-12:00', ['from', 'to']],
  ])('when stats are asked with %s, then 400 names the parameter', async (_what, query, fields) => {
    const res = await t.request({ url: `/api/v1/links/${code}/stats?${query}`, token: user.token });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(fields);
    expect(res.body.error.details[0].message).toMatch(/1970.*9999.*e\.g\. 2030-01-01T00:00:00Z/);
  });

  it('when click records are asked from before 1970, then 400 names from', async () => {
    const res = await t.request({ url: `/api/v1/links/${code}/clicks?from=1969-01-01T00:00:00Z`, token: user.token });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['from']);
  });

  it('when a link or an API key would expire after 9999, then 400 names expires_at and nothing is stored; the last instant is fine', async () => {
    const past = '9999-12-31T23:59:59.999-00:01';
    const link = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: user.token,
      payload: { original_url: 'https://example.com/late', expires_at: past },
    });
    expect(expectEnvelope(link, 400, 'VALIDATION_ERROR')).toEqual(['expires_at']);
    const patch = await t.request({
      method: 'PATCH',
      url: `/api/v1/links/${code}`,
      token: user.token,
      payload: { expires_at: past },
    });
    expect(expectEnvelope(patch, 400, 'VALIDATION_ERROR')).toEqual(['expires_at']);
    const key = await t.request({
      method: 'POST',
      url: keysUrl(user.id),
      token: user.token,
      payload: { name: 'late', scopes: ['links:read'], expires_at: past },
    });
    expect(expectEnvelope(key, 400, 'VALIDATION_ERROR')).toEqual(['expires_at']);
    const last = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: user.token,
      payload: { original_url: 'https://example.com/last', expires_at: '9999-12-31T23:59:59.999Z' },
    });
    expect(last.status).toBe(201);
    expect(last.body.expires_at).toBe('9999-12-31T23:59:59.999Z');
  });
});
