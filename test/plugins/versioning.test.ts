import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';

describe.each(engines)('API versions on %s', (engine) => {
  const t = useTestApp(engine);
  const owner = useUser(t);

  const v1Keys = [
    'aliases',
    'bot_clicks',
    'click_count',
    'created_at',
    'disabled',
    'disabled_reason',
    'domain',
    'expires_at',
    'fallback_url',
    'forward_query',
    'has_password',
    'health',
    'human_clicks',
    'id',
    'max_visits',
    'original_url',
    'preview',
    'short_code',
    'short_url',
    'tags',
    'title',
    'updated_at',
    'user_id',
  ];
  const v2Keys = [
    'aliases',
    'botClicks',
    'clickCount',
    'createdAt',
    'disabled',
    'disabledReason',
    'domain',
    'expiresAt',
    'fallbackUrl',
    'forwardQuery',
    'hasPassword',
    'health',
    'humanClicks',
    'id',
    'maxVisits',
    'originalUrl',
    'preview',
    'shortCode',
    'shortUrl',
    'tags',
    'title',
    'updatedAt',
    'userId',
  ];

  it('when a link is created on /api/v2 with camelCase fields, then it answers in camelCase with a v2 Location', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v2/links',
      token: owner.token,
      payload: { originalUrl: 'https://example.com/v2', shortCode: 'v2abc' },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(v2Keys);
    expect(res.body).toMatchObject({
      shortCode: 'v2abc',
      originalUrl: 'https://example.com/v2',
      userId: owner.id,
      clickCount: 0,
    });
    expect(res.headers.location).toBe('/api/v2/links/v2abc');
    const v1 = await t.request({ url: '/api/v1/links/v2abc', token: owner.token });
    expect(Object.keys(v1.body).sort()).toEqual(v1Keys);
    expect(v1.body.short_code).toBe('v2abc');
  });

  it('when v2 is sent a v1 (snake_case) field, then 400 names it and nothing is created', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v2/links',
      payload: { original_url: 'https://example.com/x' },
    });
    expect(res.status).toBe(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(['originalUrl', 'original_url']);
  });

  it('when v2 stats and collections are read, then they are camelCase and page by cursor only', async () => {
    await t.request({
      method: 'POST',
      url: '/api/v2/links',
      token: owner.token,
      payload: { originalUrl: 'https://example.com/s' },
    });
    const list = await t.request({
      url: `/api/v2/users/${owner.id}/links?limit=1&sort=createdAt&order=desc`,
      token: owner.token,
    });
    expect(list.status).toBe(200);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(v2Keys);
    expect(list.body.pagination).toEqual({ limit: 1, nextCursor: expect.any(String) });
    const next = await t.request({
      url: `/api/v2/users/${owner.id}/links?limit=1&sort=createdAt&order=desc&cursor=${encodeURIComponent(list.body.pagination.nextCursor)}`,
      token: owner.token,
    });
    expect(next.status).toBe(200);
    expect(next.body.data[0].shortCode).not.toBe(list.body.data[0].shortCode);
    const paged = await t.request({ url: `/api/v2/users/${owner.id}/links?page=1`, token: owner.token });
    expect(paged.status).toBe(400);
    expect(paged.body.error.details[0].field).toBe('page');
    const users = await t.request({ url: `/api/v2/users/${owner.id}/orders?page=2`, token: owner.token });
    expect(users.status).toBe(400);
    const stats = await t.request({ url: `/api/v2/links/${list.body.data[0].shortCode}/stats`, token: owner.token });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({
      shortCode: list.body.data[0].shortCode,
      totalClicks: 0,
      clickCount: 0,
      uniqueVisitors: 0,
      topReferrers: [],
      topUserAgents: [],
    });
    expect(stats.body).not.toHaveProperty('short_code');
  });

  it('when an unversioned path is asked for v2 by Accept, then v2 answers, names itself and varies on Accept', async () => {
    const res = await t.request({
      url: '/api/links/v2abc',
      token: owner.token,
      headers: { accept: 'application/vnd.ferry.v2+json' },
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.ferry.v2+json; charset=utf-8');
    expect(String(res.headers.vary)).toMatch(/Accept/);
    expect(res.body.shortCode).toBe('v2abc');
  });

  it('when an unversioned path has no version signal, then v1 answers and says so; ?version=2 selects v2', async () => {
    const plain = await t.request({ url: '/api/links/v2abc', token: owner.token });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('application/vnd.ferry.v1+json; charset=utf-8');
    expect(plain.body.short_code).toBe('v2abc');
    const query = await t.request({ url: '/api/links/v2abc?version=2', token: owner.token });
    expect(query.headers['content-type']).toBe('application/vnd.ferry.v2+json; charset=utf-8');
    expect(query.body.shortCode).toBe('v2abc');
  });

  it('when an unknown version is asked for, then 406 by header and 400 by query, in the envelope', async () => {
    const byHeader = await t.request({
      url: '/api/links/v2abc',
      token: owner.token,
      headers: { accept: 'application/vnd.ferry.v9+json' },
    });
    expect(byHeader.status).toBe(406);
    expect(byHeader.body.error.code).toBe('NOT_ACCEPTABLE');
    const byQuery = await t.request({ url: '/api/links/v2abc?version=9', token: owner.token });
    expect(byQuery.status).toBe(400);
    expect(byQuery.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: 'version', message: expect.any(String) }],
    });
  });

  it('when a versioned path is asked for another version by Accept or query, then the path wins', async () => {
    const res = await t.request({
      url: '/api/v1/links/v2abc?version=2',
      token: owner.token,
      headers: { accept: 'application/vnd.ferry.v2+json' },
    });
    expect(res.status).toBe(200);
    expect(res.body.short_code).toBe('v2abc');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('when users and orders are used through v2, then they behave as in v1', async () => {
    const me = await t.request({ url: '/api/v2/users/me', token: owner.token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(owner.id);
    const created = await t.request({
      method: 'POST',
      url: '/api/v2/users',
      payload: { username: `v2_${owner.id}`, email: `v2_${owner.id}@example.com`, password: 'long-enough-pw' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`/api/v2/users/${created.body.id}`);
  });
});

describe('deprecation signals', () => {
  const t = useTestApp('sqlite', {
    env: {
      API_V1_DEPRECATED_AT: '2026-12-01T00:00:00Z',
      API_V1_SUNSET_AT: '2027-06-30T23:59:59Z',
      API_V1_DEPRECATION_LINK: 'https://docs.example/ferry/v1-deprecation',
    },
  });

  it('when v1 is configured as deprecated, then its responses carry Deprecation, a deprecation Link and Sunset; v2 does not', async () => {
    const v1 = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: 'https://example.com/d' },
    });
    expect(v1.status).toBe(201);
    expect(v1.headers.deprecation).toBe(`@${Date.parse('2026-12-01T00:00:00Z') / 1000}`);
    expect(v1.headers.link).toBe('<https://docs.example/ferry/v1-deprecation>; rel="deprecation"; type="text/html"');
    expect(v1.headers.sunset).toBe('Wed, 30 Jun 2027 23:59:59 GMT');
    const viaAccept = await t.request({ url: `/api/links/${v1.body.short_code}` });
    expect(viaAccept.headers.deprecation).toBeDefined();
    const v2 = await t.request({ url: `/api/v2/links/${v1.body.short_code}` });
    expect(v2.status).toBe(200);
    expect(v2.headers.deprecation).toBeUndefined();
    expect(v2.headers.sunset).toBeUndefined();
  });

  it('when Sunset is configured earlier than Deprecation, then the configuration is refused', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(() => loadConfig({ API_V1_DEPRECATED_AT: '2027-01-01', API_V1_SUNSET_AT: '2026-01-01' })).toThrow(
      /API_V1_SUNSET_AT: must not be earlier than API_V1_DEPRECATED_AT/,
    );
  });
});
