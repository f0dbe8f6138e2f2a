import { describe, expect, it } from 'vitest';
import { engines, type ApiResponse, type TestApp } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { BOT_UA, clickRecords, createLink, HUMAN_UA, LINKS, patchLink } from './links.helpers.js';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const IPAD =
  'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const ANDROID =
  'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36';
const MAC_SAFARI =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
const WINDOWS_EDGE =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0';

const rulesUrl = (code: string) => `${LINKS}/${code}/rules`;
const url = (u: string) => ({ url: u });

describe.each(engines)('link rules on %s', (engine) => {
  // A trusted proxy: the tests name the client address (X-Forwarded-For) and its country (CF-IPCountry).
  const t = useTestApp(engine, { env: { TRUST_PROXY: '127.0.0.1', COUNTRY_HEADER: 'CF-IPCountry' } });
  const owner = useUser(t);
  const other = useUser(t);
  const admin = useUser(t, { role: 'admin' });

  const put = (code: string, rules: unknown, opts: { token?: string; headers?: Record<string, string> } = {}) =>
    t.request({
      method: 'PUT',
      url: rulesUrl(code),
      payload: { rules },
      token: opts.token ?? owner.token,
      ...(opts.headers ? { headers: opts.headers } : {}),
    });
  const get = (code: string, token = owner.token) => t.request({ url: rulesUrl(code), token });
  const go = (
    code: string,
    headers: Record<string, string> = {},
    method: 'GET' | 'HEAD' = 'GET',
  ): Promise<ApiResponse> => t.request({ method, url: `/${code}`, headers: { 'user-agent': HUMAN_UA, ...headers } });
  const linkWith = async (rules: unknown, extra: Record<string, unknown> = {}) => {
    const link = await createLink(t, { original_url: 'https://example.com/default', ...extra }, owner.token);
    if (rules !== undefined) expect((await put(link.short_code, rules)).status).toBe(200);
    return link;
  };
  const rule = (conditions: unknown[], target: unknown = url('https://example.com/hit'), more = {}) => ({
    conditions,
    target,
    ...more,
  });

  it('when rules are put, then they are stored with ids, answered with an ETag, and GET shows the same list', async () => {
    const link = await createLink(t, {}, owner.token);
    const res = await put(link.short_code, [
      rule([{ type: 'device', values: ['iOS'] }], url('https://apps.apple.com/app/x'), { name: ' iPhones ' }),
      rule([{ type: 'query', key: 'v', match: 'present' }], {
        split: [
          { url: 'https://example.com/a', weight: 50 },
          { url: 'https://example.com/b', weight: 50 },
        ],
      }),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.etag).toMatch(/^"link-\d+-v\d+"$/);
    const [first, second] = res.body.rules;
    expect(first).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9]{8}$/),
      name: 'iPhones',
      enabled: true,
      conditions: [{ type: 'device', values: ['ios'] }],
      target: { url: 'https://apps.apple.com/app/x' },
    });
    expect(second.conditions).toEqual([{ type: 'query', key: 'v', match: 'present', values: [] }]);
    expect(second.target.sticky).toBe(true);
    expect(second.target.split.map((v: { id: string }) => v.id)).toHaveLength(2);
    const read = await get(link.short_code);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    expect(read.headers.etag).toBe(res.headers.etag);
  });

  it('when a PUT sends ids back, then they are kept; an id Ferry never gave is replaced', async () => {
    const link = await linkWith([
      rule([{ type: 'country', values: ['de'] }], {
        split: [
          { url: 'https://example.com/a', weight: 30 },
          { url: 'https://example.com/b', weight: 70 },
        ],
      }),
    ]);
    const stored = (await get(link.short_code)).body.rules;
    const again = await put(link.short_code, [
      ...stored,
      { ...rule([{ type: 'country', values: ['FR'] }]), id: 'madeup1' },
    ]);
    expect(again.status).toBe(200);
    expect(again.body.rules[0]).toEqual({ ...stored[0], conditions: [{ type: 'country', values: ['DE'] }] });
    expect(again.body.rules[1].id).not.toBe('madeup1');
  });

  it('when If-Match is stale, then the PUT is 412 and the rules are unchanged; a current one is accepted', async () => {
    const link = await linkWith([rule([{ type: 'device', values: ['android'] }])]);
    const etag = (await get(link.short_code)).headers.etag as string;
    expect((await put(link.short_code, [], { headers: { 'if-match': etag } })).status).toBe(200);
    const stale = await put(link.short_code, [rule([{ type: 'device', values: ['ios'] }])], {
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('PRECONDITION_FAILED');
    expect((await get(link.short_code)).body.rules).toEqual([]);
  });

  it('when someone else or nobody asks, then the rules are refused: 403, 401; an admin may read and write them', async () => {
    const link = await linkWith([rule([{ type: 'device', values: ['android'] }])]);
    expect((await get(link.short_code, other.token)).status).toBe(403);
    expect((await put(link.short_code, [], { token: other.token })).status).toBe(403);
    expect((await t.request({ url: rulesUrl(link.short_code) })).status).toBe(401);
    expect((await get(link.short_code, admin.token)).status).toBe(200);
    expect((await get('nope1234')).status).toBe(404);
  });

  it.each([
    ['an unknown condition type', [rule([{ type: 'planet', values: ['mars'] }])], ['rules.0.conditions.0.type']],
    ['an unknown device', [rule([{ type: 'device', values: ['ios', 'toaster'] }])], ['rules.0.conditions.0.values.1']],
    ['an unknown browser', [rule([{ type: 'browser', values: ['netscape'] }])], ['rules.0.conditions.0.values.0']],
    ['a bad language tag', [rule([{ type: 'language', values: ['english!'] }])], ['rules.0.conditions.0.values.0']],
    ['a bad country', [rule([{ type: 'country', values: ['DEU'] }])], ['rules.0.conditions.0.values.0']],
    [
      'a bad CIDR',
      [rule([{ type: 'ip', values: ['10.0.0.0/33', '2001:db8::/129', 'x'] }])],
      ['rules.0.conditions.0.values.0', 'rules.0.conditions.0.values.1', 'rules.0.conditions.0.values.2'],
    ],
    ['a query without key', [rule([{ type: 'query', values: ['a'] }])], ['rules.0.conditions.0.key']],
    [
      'present with values',
      [rule([{ type: 'query', key: 'a', match: 'present', values: ['x'] }])],
      ['rules.0.conditions.0.values'],
    ],
    ['equals without values', [rule([{ type: 'query', key: 'a' }])], ['rules.0.conditions.0.values']],
    [
      'a key on a device condition',
      [rule([{ type: 'device', key: 'a', values: ['ios'] }])],
      ['rules.0.conditions.0.key'],
    ],
    [
      'two instants',
      [rule([{ type: 'after', values: ['2030-01-01T00:00:00Z', '2031-01-01T00:00:00Z'] }])],
      ['rules.0.conditions.0.values'],
    ],
    ['a bad instant', [rule([{ type: 'before', values: ['soon'] }])], ['rules.0.conditions.0.values.0']],
    [
      'a bad referrer host',
      [rule([{ type: 'referrer_host', values: ['https://x.com/'] }])],
      ['rules.0.conditions.0.values.0'],
    ],
    ['no conditions', [rule([])], ['rules.0.conditions']],
    ['no values', [rule([{ type: 'country', values: [] }])], ['rules.0.conditions.0.values']],
    [
      'weights not summing to 100',
      [
        rule([{ type: 'device', values: ['ios'] }], {
          split: [
            { url: 'https://e.com/a', weight: 50 },
            { url: 'https://e.com/b', weight: 49 },
          ],
        }),
      ],
      ['rules.0.target.split'],
    ],
    [
      'a weight of 100',
      [
        rule([{ type: 'device', values: ['ios'] }], {
          split: [
            { url: 'https://e.com/a', weight: 100 },
            { url: 'https://e.com/b', weight: 0 },
          ],
        }),
      ],
      ['rules.0.target.split.0.weight', 'rules.0.target.split.1.weight'],
    ],
    [
      'one variant',
      [rule([{ type: 'device', values: ['ios'] }], { split: [{ url: 'https://e.com/a', weight: 100 }] })],
      ['rules.0.target.split', 'rules.0.target.split.0.weight'],
    ],
    [
      'url and split',
      [
        rule([{ type: 'device', values: ['ios'] }], {
          url: 'https://e.com/a',
          split: [
            { url: 'https://e.com/a', weight: 50 },
            { url: 'https://e.com/b', weight: 50 },
          ],
        }),
      ],
      ['rules.0.target'],
    ],
    [
      'a javascript: target',
      [rule([{ type: 'device', values: ['ios'] }], url('javascript:alert(1)'))],
      ['rules.0.target.url'],
    ],
    [
      'a self-link variant',
      [
        rule([{ type: 'device', values: ['ios'] }], {
          split: [
            { url: 'https://e.com/a', weight: 50 },
            { url: 'http://localhost:3000/abc', weight: 50 },
          ],
        }),
      ],
      ['rules.0.target.split.1.url'],
    ],
    ['21 rules', Array.from({ length: 21 }, () => rule([{ type: 'device', values: ['ios'] }])), ['rules']],
    [
      '11 conditions',
      [rule(Array.from({ length: 11 }, () => ({ type: 'device', values: ['ios'] })))],
      ['rules.0.conditions'],
    ],
    [
      '51 values',
      [rule([{ type: 'language', values: Array.from({ length: 51 }, () => 'en') }])],
      ['rules.0.conditions.0.values'],
    ],
  ])(
    'when a rule has %s, then the PUT is 400 naming each offending field, and nothing changes',
    async (_what, rules, fields) => {
      const link = await linkWith([rule([{ type: 'device', values: ['android'] }])]);
      const before = await get(link.short_code);
      const res = await put(link.short_code, rules);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([...fields].sort());
      expect(await get(link.short_code)).toMatchObject({ body: before.body, headers: { etag: before.headers.etag } });
    },
  );

  it('when rules come with a creation, a bulk creation and a PATCH, then they are checked and stored alike', async () => {
    const created = await t.request({
      method: 'POST',
      url: LINKS,
      token: owner.token,
      payload: { original_url: 'https://example.com/x', rules: [rule([{ type: 'device', values: ['ios'] }])] },
    });
    expect(created.status).toBe(201);
    expect((await get(created.body.short_code)).body.rules).toHaveLength(1);
    const bad = await t.request({
      method: 'POST',
      url: LINKS,
      token: owner.token,
      payload: { original_url: 'https://example.com/x', rules: [rule([{ type: 'device', values: ['fridge'] }])] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: 'rules.0.conditions.0.values.0', message: expect.any(String) }]);
    const bulk = await t.request({
      method: 'POST',
      url: `${LINKS}/bulk`,
      token: owner.token,
      payload: {
        links: [
          { original_url: 'https://example.com/1', rules: [rule([{ type: 'browser', values: ['firefox'] }])] },
          { original_url: 'https://example.com/2', rules: [rule([{ type: 'browser', values: ['lynx'] }])] },
        ],
      },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.data.map((d: { status: number }) => d.status)).toEqual([201, 400]);
    expect((await get(bulk.body.data[0].link.short_code)).body.rules[0].conditions).toEqual([
      { type: 'browser', values: ['firefox'] },
    ]);
    const code = created.body.short_code as string;
    const kept = (await get(code)).body.rules[0];
    const patched = await patchLink(
      t,
      code,
      { rules: [kept, rule([{ type: 'country', values: ['FR'] }])] },
      { token: owner.token },
    );
    expect(patched.status).toBe(200);
    expect((await get(code)).body.rules.map((r: { id: string }) => r.id)[0]).toBe(kept.id);
    expect((await patchLink(t, code, { rules: null }, { token: owner.token })).status).toBe(200);
    expect((await get(code)).body.rules).toEqual([]);
  });

  it('when the device, browser, language, country, ip, query, referrer and dates differ, then each rule matches exactly its visits', async () => {
    const link = await linkWith([
      rule([{ type: 'device', values: ['ipados'] }], url('https://example.com/ipad')),
      rule([{ type: 'device', values: ['ios'] }], url('https://example.com/ios')),
      rule(
        [
          { type: 'device', values: ['android'] },
          { type: 'browser', values: ['samsung'] },
        ],
        url('https://example.com/samsung'),
      ),
      rule([{ type: 'browser', values: ['edge'] }], url('https://example.com/edge')),
      rule([{ type: 'device', values: ['macos'] }], url('https://example.com/mac')),
      rule([{ type: 'language', values: ['pt-BR'] }], url('https://example.com/br')),
      rule([{ type: 'language', values: ['de'] }], url('https://example.com/de')),
      rule([{ type: 'country', values: ['FR', 'BE'] }], url('https://example.com/fr')),
      rule([{ type: 'ip', values: ['203.0.113.0/24', '2001:db8::/32'] }], url('https://example.com/net')),
      rule([{ type: 'query', key: 'utm_source', values: ['news', 'mail'] }], url('https://example.com/news')),
      rule([{ type: 'query', key: 'beta', match: 'present' }], url('https://example.com/beta')),
      rule([{ type: 'referrer_host', values: ['example.org'] }], url('https://example.com/ref')),
      rule(
        [
          { type: 'after', values: ['2000-01-01T00:00:00Z'] },
          { type: 'before', values: ['2001-01-01T00:00:00Z'] },
        ],
        url('https://example.com/y2k'),
      ),
      rule(
        [
          { type: 'query', key: 'nodebug', match: 'absent' },
          { type: 'query', key: 'debug', match: 'present' },
        ],
        url('https://example.com/debug'),
      ),
    ]);
    const c = link.short_code;
    const where = async (headers: Record<string, string>, path = c) => (await go(path, headers)).headers.location;
    expect(await where({ 'user-agent': IPAD })).toBe('https://example.com/ipad');
    expect(await where({ 'user-agent': IPHONE })).toBe('https://example.com/ios');
    expect(await where({ 'user-agent': ANDROID })).toBe('https://example.com/samsung');
    expect(await where({ 'user-agent': WINDOWS_EDGE })).toBe('https://example.com/edge');
    expect(await where({ 'user-agent': MAC_SAFARI })).toBe('https://example.com/mac');
    expect(await where({ 'accept-language': 'pt-PT, pt;q=0.9' })).toBe('https://example.com/default');
    expect(await where({ 'accept-language': 'en;q=0.9, pt-BR;q=0.8' })).toBe('https://example.com/br');
    expect(await where({ 'accept-language': 'de-AT' })).toBe('https://example.com/de');
    expect(await where({ 'accept-language': 'de;q=0' })).toBe('https://example.com/default');
    expect(await where({ 'cf-ipcountry': 'be', 'x-forwarded-for': '198.51.100.9' })).toBe('https://example.com/fr');
    expect(await where({ 'cf-ipcountry': 'be' })).toBe('https://example.com/default'); // not through the proxy
    expect(await where({ 'x-forwarded-for': '203.0.113.77' })).toBe('https://example.com/net');
    expect(await where({ 'x-forwarded-for': '2001:db8:1::5' })).toBe('https://example.com/net');
    expect(await where({ 'x-forwarded-for': '198.51.100.1' })).toBe('https://example.com/default');
    expect(await where({}, `${c}?utm_source=mail`)).toBe('https://example.com/news');
    expect(await where({}, `${c}?utm_source=web`)).toBe('https://example.com/default');
    expect(await where({}, `${c}?beta`)).toBe('https://example.com/beta');
    expect(await where({ referer: 'https://blog.example.org/post' })).toBe('https://example.com/ref');
    expect(await where({ referer: 'https://notexample.org/post' })).toBe('https://example.com/default');
    expect(await where({}, `${c}?debug=1`)).toBe('https://example.com/debug');
    expect(await where({}, `${c}?debug=1&nodebug=1`)).toBe('https://example.com/default');
  });

  it('when a rule is disabled or an earlier one matches too, then the first enabled match wins; forward_query applies to the chosen URL', async () => {
    const link = await linkWith(
      [
        rule([{ type: 'device', values: ['ios'] }], url('https://example.com/off'), { enabled: false }),
        rule([{ type: 'device', values: ['mobile'] }], url('https://example.com/mobile?a=1')),
        rule([{ type: 'device', values: ['ios'] }], url('https://example.com/ios')),
      ],
      { forward_query: true },
    );
    const res = await go(`${link.short_code}?utm_source=x`, { 'user-agent': IPHONE });
    expect(res.headers.location).toBe('https://example.com/mobile?a=1&utm_source=x');
    expect(res.headers['cache-control']).toBe('private, no-store');
  });

  it('when a date switches a campaign on, then visits before it go to original_url and after it to the campaign', async () => {
    const at = new Date(t.clock.now() + 3_600_000).toISOString();
    const link = await linkWith([rule([{ type: 'after', values: [at] }], url('https://example.com/campaign'))]);
    expect((await go(link.short_code)).headers.location).toBe('https://example.com/default');
    t.clock.advance(3_600_000);
    expect((await go(link.short_code)).headers.location).toBe('https://example.com/campaign');
  });

  it('when a sticky split is visited, then a person gets the cookie exactly, keeps the variant, and a forged cookie is reassigned; bots and HEAD get the first variant and no cookie', async () => {
    const link = await linkWith([
      rule([{ type: 'query', key: 'x', match: 'absent' }], {
        split: [
          { url: 'https://example.com/a', weight: 50 },
          { url: 'https://example.com/b', weight: 50 },
        ],
      }),
    ]);
    const { rules } = (await get(link.short_code)).body;
    const [a, b] = rules[0].target.split as Array<{ id: string; url: string }>;
    const first = await go(link.short_code);
    const cookie = first.headers['set-cookie'] as string;
    const chosen = [a!, b!].find((v) => v.url === first.headers.location)!;
    expect(cookie).toBe(
      `ferry_v_${link.id}=${chosen.id}; Path=/${link.short_code}; Max-Age=2592000; HttpOnly; SameSite=Lax`,
    );
    expect(first.headers['cache-control']).toBe('private, no-store');
    for (let i = 0; i < 5; i += 1) {
      const again = await go(link.short_code, { cookie: `other=1; ferry_v_${link.id}=${chosen.id}` });
      expect(again.headers.location).toBe(chosen.url);
      expect(again.headers['set-cookie']).toBeUndefined();
    }
    const forged = await go(link.short_code, { cookie: `ferry_v_${link.id}=forged` });
    expect(forged.headers['set-cookie']).toMatch(new RegExp(`^ferry_v_${link.id}=(${a!.id}|${b!.id});`));
    for (const res of [await go(link.short_code, { 'user-agent': BOT_UA }), await go(link.short_code, {}, 'HEAD')]) {
      expect(res.headers.location).toBe(a!.url);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('when a 50/50 split gets 400 first visits, then both variants get a fair share, and the clicks are recorded', async () => {
    const link = await linkWith([
      rule([{ type: 'query', key: 'x', match: 'absent' }], {
        split: [
          { url: 'https://example.com/a', weight: 50 },
          { url: 'https://example.com/b', weight: 50 },
        ],
        sticky: false,
      }),
    ]);
    let toA = 0;
    for (let i = 0; i < 400; i += 1) {
      const res = await go(link.short_code);
      expect(res.headers['set-cookie']).toBeUndefined();
      if (res.headers.location === 'https://example.com/a') toA += 1;
    }
    // 400 fair coin tosses: outside 140-260 with probability below 1e-9.
    expect(toA).toBeGreaterThan(140);
    expect(toA).toBeLessThan(260);
    expect(await clickRecords(t, link.id)).toHaveLength(400);
  });

  it('when routed visits are made, then each click record names the rule and the variant the visit got, and the statistics count them by rule and by variant', async () => {
    const link = await linkWith([
      rule([{ type: 'device', values: ['ios'] }], url('https://example.com/ios')),
      rule([{ type: 'query', key: 'x', match: 'absent' }], {
        split: [
          { url: 'https://example.com/a', weight: 50 },
          { url: 'https://example.com/b', weight: 50 },
        ],
        sticky: false,
      }),
    ]);
    const [ios, split] = (await get(link.short_code)).body.rules;
    const variantOf = new Map<string, string>(
      split.target.split.map((v: { id: string; url: string }) => [v.url, v.id]),
    );
    const expected: Array<{ rule_id: string; variant_id: string | null }> = [];
    for (let i = 0; i < 12; i += 1) {
      const res = await go(link.short_code, { 'x-forwarded-for': `203.0.113.${i % 4}` });
      expected.push({ rule_id: split.id, variant_id: variantOf.get(res.headers.location as string)! });
    }
    expect((await go(link.short_code, { 'user-agent': IPHONE })).headers.location).toBe('https://example.com/ios');
    expected.push({ rule_id: ios.id, variant_id: null });
    expect((await go(link.short_code, {}, 'HEAD')).status).toBe(302);
    const records = await clickRecords(t, link.id);
    expect(records.map((r) => ({ rule_id: r.rule_id, variant_id: r.variant_id }))).toEqual(expected);

    const stats = await t.request({ url: `${LINKS}/${link.short_code}/stats`, token: owner.token });
    expect(stats.status).toBe(200);
    expect(stats.body.by_rule).toEqual(
      expect.arrayContaining([
        { rule_id: split.id, human_clicks: 12, unique_visitors: 4 },
        { rule_id: ios.id, human_clicks: 1, unique_visitors: 1 },
      ]),
    );
    const perVariant = expected.filter((e) => e.variant_id !== null).length;
    const counted = stats.body.by_variant.reduce((n: number, v: { human_clicks: number }) => n + v.human_clicks, 0);
    expect(counted).toBe(perVariant);
    for (const v of stats.body.by_variant) expect([...variantOf.values()]).toContain(v.variant_id);
  });

  it('when the dry run is asked, then it answers the rule, the variant, the URL and the trace, and records no click', async () => {
    const link = await linkWith([
      rule([{ type: 'device', values: ['android'] }], url('https://example.com/play')),
      rule(
        [
          { type: 'device', values: ['ios'] },
          { type: 'language', values: ['de'] },
        ],
        url('https://example.com/de-ios'),
      ),
    ]);
    const ids = (await get(link.short_code)).body.rules.map((r: { id: string }) => r.id);
    const res = await t.request({
      method: 'POST',
      url: `${rulesUrl(link.short_code)}/evaluate`,
      token: owner.token,
      payload: { user_agent: IPHONE, accept_language: 'de-DE', query: { a: ['1', '2'] }, at: '2030-01-01T00:00:00Z' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      rule_id: ids[1],
      variant_id: null,
      url: 'https://example.com/de-ios',
      trace: [
        { rule_id: ids[0], matched: false, conditions: [{ type: 'device', matched: false }] },
        {
          rule_id: ids[1],
          matched: true,
          conditions: [
            { type: 'device', matched: true },
            { type: 'language', matched: true },
          ],
        },
      ],
    });
    const none = await t.request({
      method: 'POST',
      url: `${rulesUrl(link.short_code)}/evaluate`,
      token: owner.token,
      payload: {},
    });
    expect(none.body).toMatchObject({ rule_id: null, variant_id: null, url: 'https://example.com/default' });
    expect(await clickRecords(t, link.id)).toHaveLength(0);
    const bad = await t.request({
      method: 'POST',
      url: `${rulesUrl(link.short_code)}/evaluate`,
      token: owner.token,
      payload: { at: 'later' },
    });
    expect(bad.status).toBe(400);
  });

  it('when v2 is used, then the rules have the same shapes and the dry run speaks camelCase (query names as sent)', async () => {
    const link = await linkWith([
      rule([{ type: 'query', key: 'utm_source', values: ['a'] }], url('https://example.com/q')),
    ]);
    const v2 = await t.request({ url: `/api/v2/links/${link.short_code}/rules`, token: owner.token });
    expect(v2.status).toBe(200);
    expect(v2.body).toEqual((await get(link.short_code)).body);
    const res = await t.request({
      method: 'POST',
      url: `/api/v2/links/${link.short_code}/rules/evaluate`,
      token: owner.token,
      payload: { userAgent: HUMAN_UA, query: { utm_source: 'a' } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ ruleId: v2.body.rules[0].id, variantId: null, url: 'https://example.com/q' });
    expect(res.body.trace[0]).toEqual({
      ruleId: v2.body.rules[0].id,
      matched: true,
      conditions: [{ type: 'query', matched: true }],
    });
    const put2 = await t.request({
      method: 'PUT',
      url: `/api/v2/links/${link.short_code}/rules`,
      token: owner.token,
      payload: { rules: [rule([{ type: 'device', values: ['x'] }])] },
    });
    expect(put2.status).toBe(400);
    expect(put2.body.error.details[0].field).toBe('rules.0.conditions.0.values.0');
  });
});

export type { TestApp };
