import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';

describe.each(engines)('link creation on %s', (engine) => {
  const t = useTestApp(engine, { env: { PUBLIC_BASE_URL: 'https://fry.example' } });

  const create = (payload: unknown, token?: string) =>
    t.request({ method: 'POST', url: '/api/v1/links', payload, ...(token ? { token } : {}) });
  const fields = (res: { body: { error: { details: Array<{ field: string }> } } }) =>
    res.body.error.details.map((d) => d.field).sort();

  it('when an anonymous client shortens a URL, then 201, Location, the record with a random 8-character code', async () => {
    const res = await create({ original_url: 'https://example.com/a/b?c=d#e' });
    expect(res.status).toBe(201);
    expect(res.body.short_code).toMatch(/^[0-9a-zA-Z]{8}$/);
    expect(res.headers.location).toBe(`/api/v1/links/${res.body.short_code}`);
    expect(res.body).toEqual({
      id: expect.any(Number),
      short_code: res.body.short_code,
      short_url: `https://fry.example/${res.body.short_code}`,
      domain: null,
      original_url: 'https://example.com/a/b?c=d#e',
      user_id: null,
      expires_at: null,
      created_at: new Date(t.clock.now()).toISOString(),
      updated_at: new Date(t.clock.now()).toISOString(),
      click_count: 0,
      human_clicks: 0,
      bot_clicks: 0,
      max_visits: null,
      forward_query: false,
      tags: [],
      has_password: false,
      title: null,
      aliases: [],
      disabled: false,
      disabled_reason: null,
      preview: null,
      fallback_url: null,
      health: { status: 'unknown', checked_at: null, http_status: null, error: null, since: null },
    });
  });

  it('when a user with a token shortens a URL, then the link is theirs', async () => {
    const u = await createUser(t);
    const res = await create({ original_url: 'http://example.org' }, u.token);
    expect(res.status).toBe(201);
    expect(res.body.user_id).toBe(u.id);
  });

  it('when an invalid token is sent, then 401 even though a token is optional', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: 'not.a.jwt',
      payload: { original_url: 'https://example.com' },
    });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHENTICATED');
  });

  it.each([
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['ftp:', 'ftp://example.com/file'],
    ['file:', 'file:///etc/passwd'],
    ['scheme-relative', '//example.com/x'],
    ['relative', '/just/a/path'],
    ['no host', 'http://'],
    ['http:/ without authority', 'http:/example.com'],
    ['empty authority', 'http:///example.com'],
    ['CRLF (header injection)', 'https://example.com/\r\nSet-Cookie: a=b'],
    ['encoded-looking but raw LF', 'https://example.com/a\nb'],
    ['tab', 'https://example.com/a\tb'],
    ['space', 'https://example.com/a b'],
    ['NUL', 'https://example.com/\u0000'],
    ['DEL', 'https://example.com/\u007f'],
    ['bidi override', 'https://example.com/\u202Egnp.exe'],
    ['zero-width space', 'https://exa\u200Bmple.com/'],
    ['backslash host confusion', 'https://evil.example\\@good.example/'],
    ['userinfo', 'https://user:pass@example.com/'],
    ['user only', 'https://user@example.com/'],
    ['empty userinfo', 'https://@example.com/'],
    ['disguised host', 'https://good.example@evil.example/'],
    ['bad port', 'https://example.com:99999/'],
    ['over-long', `https://example.com/${'a'.repeat(2048)}`],
    ['own short link', 'https://fry.example/abc123'],
    ['own origin, other case and default port', 'HTTPS://FRY.example:443/x'],
    ['not a URL at all', 'hello'],
  ])(
    'when original_url is hostile or invalid (%s), then 400 VALIDATION_ERROR on original_url and nothing is stored',
    async (_label, url) => {
      const before = await t.storage.db
        .selectFrom('links')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const res = await create({ original_url: url });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(fields(res)).toEqual(['original_url']);
      const after = await t.storage.db
        .selectFrom('links')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    },
  );

  it('when the URL is exactly 2048 characters, then it is accepted', async () => {
    const url = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    expect(url).toHaveLength(2048);
    const res = await create({ original_url: url });
    expect(res.status).toBe(201);
    expect(res.body.original_url).toBe(url);
  });

  it('when the URL has an internationalised host and path, then it is accepted and stored in its ASCII form', async () => {
    const res = await create({ original_url: 'https://bücher.example/straße?q=ü' });
    expect(res.status).toBe(201);
    expect(res.body.original_url).toBe('https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC');
  });

  it('when an ASCII URL is sent, then it is stored exactly as sent (no normalisation)', async () => {
    const url = 'HTTPS://Example.COM:443/A/../b?x=%41&y=|';
    const res = await create({ original_url: url });
    expect(res.status).toBe(201);
    expect(res.body.original_url).toBe(url);
  });

  it('when a custom code is free, then it is used; when it is taken, then 409 CONFLICT on short_code', async () => {
    const first = await create({ original_url: 'https://example.com/1', short_code: 'Promo1' });
    expect(first.status).toBe(201);
    expect(first.body.short_code).toBe('Promo1');
    const again = await create({ original_url: 'https://example.com/2', short_code: 'Promo1' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
    expect(fields(again)).toEqual(['short_code']);
  });

  it('when two custom codes differ only in case, then both exist as different links', async () => {
    const lower = await create({ original_url: 'https://example.com/lower', short_code: 'casetst' });
    const upper = await create({ original_url: 'https://example.com/upper', short_code: 'CASETST' });
    expect(lower.status).toBe(201);
    expect(upper.status).toBe(201);
    expect((await t.request({ url: '/api/v1/links/casetst' })).body.original_url).toBe('https://example.com/lower');
    expect((await t.request({ url: '/api/v1/links/CASETST' })).body.original_url).toBe('https://example.com/upper');
    expect((await t.request({ url: '/api/v1/links/CaseTst' })).status).toBe(404);
  });

  it.each(['api', 'docs', 'v3', 'healthz', 'readyz', 'metrics', 'Docs', 'API'])(
    'when the custom code %s names a path of the service, then 400 on short_code',
    async (code) => {
      const res = await create({ original_url: 'https://example.com', short_code: code });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(fields(res)).toEqual(['short_code']);
    },
  );

  it.each(['', 'toolong12', 'has-dash', 'ümlaut', 'a b', 'a/b'])(
    'when the custom code %j is not 1-8 of 0-9a-zA-Z, then 400 on short_code',
    async (code) => {
      const res = await create({ original_url: 'https://example.com', short_code: code });
      expect(res.status).toBe(400);
      expect(fields(res)).toEqual(['short_code']);
    },
  );

  it('when expires_at is in the future, then it is kept; in the past or now, then 400; not a date-time, then 400', async () => {
    const future = new Date(t.clock.now() + 3_600_000).toISOString();
    const ok = await create({ original_url: 'https://example.com', expires_at: future });
    expect(ok.status).toBe(201);
    expect(ok.body.expires_at).toBe(future);
    for (const bad of [
      new Date(t.clock.now()).toISOString(),
      new Date(t.clock.now() - 1000).toISOString(),
      'tomorrow',
      '2030-01-01',
    ]) {
      const res = await create({ original_url: 'https://example.com', expires_at: bad });
      expect(res.status, bad).toBe(400);
      expect(fields(res)).toEqual(['expires_at']);
    }
    const nullish = await create({ original_url: 'https://example.com', expires_at: null });
    expect(nullish.status).toBe(201);
    expect(nullish.body.expires_at).toBeNull();
  });

  it('when several fields are wrong, then every one is reported, and unknown fields are named', async () => {
    const res = await create({
      original_url: 'javascript:1',
      short_code: 'docs',
      expires_at: '2000-01-01T00:00:00Z',
      colour: 'red',
    });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['colour']);
    const res2 = await create({ original_url: 'javascript:1', short_code: 'docs', expires_at: '2000-01-01T00:00:00Z' });
    expect(fields(res2)).toEqual(['expires_at', 'original_url', 'short_code']);
  });

  it('when read-only fields from a GET are echoed back, then they are ignored', async () => {
    const res = await create({
      original_url: 'https://example.com/echo',
      id: 5,
      short_url: 'x',
      user_id: 99,
      created_at: 'y',
      click_count: 7,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ user_id: null, click_count: 0 });
    expect(res.body.id).not.toBe(5);
  });

  it('when 1000 links are created concurrently, then 1000 distinct codes', async () => {
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => create({ original_url: `https://example.com/c/${i}` })),
    );
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(new Set(results.map((r) => r.body.short_code)).size).toBe(1000);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1000);
  }, 120_000);

  // On SQLite the creations of one event-loop turn are committed together (links.repository.ts): a taken
  // code must fail its own request only, and every 201 must be a link that exists.
  it('when creations race for one custom code among others, then one wins, the rest get 409, and the others are unaffected', async () => {
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => create({ original_url: 'https://example.com/race', short_code: 'Race01' })),
      ...Array.from({ length: 5 }, (_, i) => create({ original_url: `https://example.com/bystander/${i}` })),
    ]);
    const race = results
      .slice(0, 5)
      .map((r) => r.status)
      .sort();
    expect(race).toEqual([201, 409, 409, 409, 409]);
    expect(results.slice(5).every((r) => r.status === 201)).toBe(true);
    for (const r of results.filter((x) => x.status === 201)) {
      const code = (r.body as { short_code: string }).short_code;
      expect((await t.request({ url: `/api/v1/links/${code}` })).status).toBe(200);
    }
  });
});
