import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/index.js';
import { clickFacts } from '../../../src/modules/clicks/rollups/rollup-plan.js';
import { decodeClickJson, encodeClick } from '../../../src/modules/clicks/transport/click-stream.js';
import { isPrefetch, visitContexts } from '../../../src/modules/redirect/visit-context.js';
import { createTestApp, engines, TestClock, type TestApp } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { clickRecords, createLink, HUMAN_UA } from '../../helpers/factories.js';
import { buildCountryMmdb } from '../../helpers/mmdb.js';
import { UA } from '../clicks/user-agents.js';

/**
 * SPEC §24's visitors' privacy and the bot signals besides the user agent: a prefetch is a bot's click (a HEAD is
 * a bot's for what a visit decides, and records no click, SPEC §6),
 * HONOR_GPC records a count only, IP_ANONYMIZE shortens the address after the country is looked up (here from a
 * DB-IP Lite-shaped database). Each on the route (app.inject) and on the fast path (a socket), which must agree.
 */
const T0 = Date.parse('2026-06-10T09:00:00.000Z');
/** the fast path trusts the outbox feed's proof for a minute (see redirect-fast-path.test.ts) */
const steadyFeed = { linkChangeFeed: { trustMs: 60_000 } };

describe('the bot signals and HONOR_GPC of a visit context', () => {
  it.each([
    ['prefetch', true],
    ['prefetch;prerender', true],
    ['Prefetch; anonymous-client-ip', true],
    ['prerender, prefetch', true],
    ['prerender', false],
    ['prefetcher', false],
    ['no-prefetch', false],
    ['', false],
  ])('when the purpose is %j, then a prefetch: %s', (value, expected) => {
    expect(isPrefetch(value)).toBe(expected);
  });

  it('when a request is a HEAD, or asks for a prefetch by Sec-Purpose or Purpose, then its context says a bot made it whatever its user agent', () => {
    const contexts = visitContexts(null);
    const human = { 'user-agent': UA.chromeWindows };
    expect(contexts('GET', undefined, human, false)).toMatchObject({ botSignal: false, isBot: false });
    expect(contexts('HEAD', undefined, human, false)).toMatchObject({ botSignal: true, isBot: true });
    for (const headers of [{ 'sec-purpose': 'prefetch;prerender' }, { purpose: 'prefetch' }]) {
      const context = contexts('GET', undefined, { ...human, ...headers }, false);
      expect(context.botSignal).toBe(true);
      expect(context.agentIfDescribed).toBeNull(); // a header check: the user agent is not described for it
      expect(context.isBot).toBe(true);
    }
    expect(contexts('GET', undefined, { 'user-agent': UA.googlebot }, false)).toMatchObject({
      botSignal: false,
      isBot: true,
    });
  });

  it('when HONOR_GPC is on, then Sec-GPC: 1 or DNT: 1 makes a count only; off, or any other value, nothing does', () => {
    const on = visitContexts(null, { honorGpc: true });
    const off = visitContexts(null);
    for (const headers of [{ 'sec-gpc': '1' }, { dnt: '1' }, { dnt: ' 1 ' }]) {
      expect(on('GET', undefined, headers, false).countOnly).toBe(true);
      expect(off('GET', undefined, headers, false).countOnly).toBe(false);
    }
    for (const headers of [{}, { 'sec-gpc': '0' }, { dnt: '0' }, { 'sec-gpc': 'yes' }])
      expect(on('GET', undefined, headers, false).countOnly).toBe(false);
  });

  it("when a click carries a signal, then the writer's facts follow it: a bot whatever the user agent, or a count only", () => {
    const click: ClickEvent = {
      linkId: 1,
      shortCode: 'a',
      clickedAt: 0,
      ip: '192.0.2.1',
      userAgent: UA.chromeWindows,
      referrer: null,
    };
    expect(clickFacts(click)).toMatchObject({ isBot: false, device: 'desktop', countOnly: false });
    expect(clickFacts({ ...click, signal: 'bot' })).toMatchObject({
      isBot: true,
      device: 'bot',
      browser: 'Chrome',
      countOnly: false,
    });
    const described = { ...click, device: 'mobile' as const, browser: 'B', os: 'O', signal: 'bot' as const };
    expect(clickFacts(described)).toMatchObject({ isBot: true, device: 'bot', browser: 'B' });
    const counted = { ...click, ip: null, userAgent: null, signal: 'count' as const };
    expect(clickFacts(counted)).toEqual({
      isBot: false,
      browser: null,
      os: null,
      device: null,
      country: null,
      countOnly: true,
    });
    expect(clickFacts({ ...counted, signal: 'count-bot' })).toMatchObject({ isBot: true, countOnly: true });
  });

  it('when a click with a signal crosses the Redis stream or the journal, then it arrives with it; an unknown signal is no click', () => {
    const click = { key: 'k', linkId: 1, shortCode: 'a', clickedAt: 5, ip: null, userAgent: null, referrer: null };
    for (const signal of ['bot', 'count', 'count-bot'] as const) {
      const text = encodeClick({ ...click, signal });
      expect(JSON.parse(text)).toHaveLength(14);
      expect(decodeClickJson(text)).toMatchObject({ ...click, signal });
    }
    expect(JSON.parse(encodeClick(click))).toHaveLength(9); // no signal: the entry it always was
    expect(
      decodeClickJson(JSON.stringify(['k', 1, 'a', 5, null, null, null, null, null, null, null, null, null, 'x'])),
    ).toBeNull();
  });
});

describe.each(engines)('bot signals and HONOR_GPC on the route and the fast path, on %s', (engine) => {
  let base: string;
  const t = useTestApp(engine, { clock: new TestClock(T0), env: { HONOR_GPC: 'true' }, deps: steadyFeed });
  const owner = useUser(t);
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  const fastPathCounted = async (): Promise<number> =>
    Number(/^ferry_redirect_fast_path_total (\d+)$/m.exec((await t.request({ url: '/metrics' })).text)?.[1] ?? 0);

  /** One visit through the route (inject) and one over a socket that the fast path answers. */
  const bothPaths = async (code: string, method: 'GET' | 'HEAD', headers: Record<string, string>) => {
    const routed = await t.request({ method, url: `/${code}`, headers });
    expect(routed.status).toBe(302);
    const before = await fastPathCounted();
    const fast = await fetch(`${base}/${code}`, { method, headers, redirect: 'manual' });
    expect(fast.status).toBe(302);
    expect(await fastPathCounted()).toBe(before + 1);
  };

  it("when a HEAD request comes with a browser's user agent, then both paths answer the same headers and record no click (SPEC §6)", async () => {
    const link = await createLink(t);
    await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': HUMAN_UA } }); // a person's, and cached
    await bothPaths(link.short_code, 'HEAD', { 'user-agent': HUMAN_UA });
    expect((await clickRecords(t, link.id)).map((c) => Number(c.is_bot))).toEqual([0]);
  });

  it.each([
    ['Sec-Purpose: prefetch;prerender', 'GET', { 'sec-purpose': 'prefetch;prerender' }],
    ['Purpose: prefetch', 'GET', { purpose: 'prefetch' }],
  ] as const)(
    "when %s comes with a browser's user agent, then both paths record a bot's click with its user agent",
    async (_what, method, signal) => {
      const link = await createLink(t);
      await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': HUMAN_UA } }); // a person's, and cached
      await bothPaths(link.short_code, method, { 'user-agent': HUMAN_UA, referer: 'https://ref.example/', ...signal });
      const records = await clickRecords(t, link.id);
      expect(records.map((c) => [Number(c.is_bot), c.device, c.user_agent])).toEqual([
        [0, 'desktop', HUMAN_UA],
        [1, 'bot', HUMAN_UA],
        [1, 'bot', HUMAN_UA],
      ]);
      const stats = (await t.request({ url: `/api/v1/links/${link.short_code}/stats` })).body;
      expect(stats).toMatchObject({ total_clicks: 3, human_clicks: 1, bot_clicks: 2, unique_visitors: 1 });
    },
  );

  it.each([
    ['Sec-GPC: 1', { 'sec-gpc': '1' }],
    ['DNT: 1', { dnt: '1' }],
  ])(
    'when a visit sends %s, then both paths record a count only: time, link, domain and bot flag, nothing of the visitor',
    async (_what, signal) => {
      const link = await createLink(t);
      await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': UA.safariIphone } }); // cached
      const person = { 'user-agent': HUMAN_UA, referer: 'https://ref.example/p', ...signal };
      await bothPaths(link.short_code, 'GET', person);
      await bothPaths(link.short_code, 'GET', { 'user-agent': UA.googlebot, ...signal });
      const records = await clickRecords(t, link.id);
      const fields = (c: (typeof records)[number]) => [
        Number(c.is_bot),
        c.ip,
        c.user_agent,
        c.referrer,
        c.browser,
        c.os,
        c.device,
        c.country,
        c.rule_id,
      ];
      expect(records.slice(1).map(fields)).toEqual([
        [0, null, null, null, null, null, null, null, null],
        [0, null, null, null, null, null, null, null, null],
        [1, null, null, null, null, null, null, null, null],
        [1, null, null, null, null, null, null, null, null],
      ]);
      expect(records.every((c) => Number(c.clicked_at) === T0 && c.domain === null)).toBe(true);
      // Counted in the totals and the series; no visitor, no browser, OS, device or referrer in the top lists.
      const stats = (await t.request({ url: `/api/v1/links/${link.short_code}/stats` })).body;
      expect(stats).toMatchObject({ total_clicks: 5, human_clicks: 3, bot_clicks: 2, unique_visitors: 1 });
      expect(stats.timeseries.reduce((n: number, b: { clicks: number }) => n + b.clicks, 0)).toBe(3);
      expect(stats.top_browsers).toEqual([{ value: 'Mobile Safari', clicks: 1 }]);
      expect(stats.top_devices).toEqual([{ value: 'mobile', clicks: 1 }]);
      expect(stats.top_referrers).toEqual([{ value: '(direct)', clicks: 1 }]);
    },
  );

  it('when a visit sends Sec-GPC: 0 or DNT: 0, then it is recorded as any other', async () => {
    const link = await createLink(t);
    await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': HUMAN_UA, 'sec-gpc': '0', dnt: '0' } });
    const [record] = await clickRecords(t, link.id);
    expect([record!.user_agent, Number(record!.is_bot), record!.ip]).toEqual([HUMAN_UA, 0, '127.0.0.1']);
  });

  it('when a link has max_visits, then a prefetch with a browser user agent does not use up a visit', async () => {
    const link = await createLink(t, { max_visits: 1 }, owner.token);
    const prefetch = { 'user-agent': HUMAN_UA, 'sec-purpose': 'prefetch' };
    expect((await t.request({ url: `/${link.short_code}`, headers: prefetch })).status).toBe(302);
    expect((await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': HUMAN_UA } })).status).toBe(302);
    expect((await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': HUMAN_UA } })).status).toBe(410);
  });
});

describe.each(engines)('HONOR_GPC off on %s', (engine) => {
  const t = useTestApp(engine);

  it('when HONOR_GPC is not set and a visit sends Sec-GPC: 1, then its click is recorded whole', async () => {
    const link = await createLink(t);
    await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': HUMAN_UA, 'sec-gpc': '1', dnt: '1' } });
    const [record] = await clickRecords(t, link.id);
    expect([record!.user_agent, record!.ip, record!.device]).toEqual([HUMAN_UA, '127.0.0.1', 'desktop']);
  });
});

describe.each(engines)('IP_ANONYMIZE with a DB-IP Lite country database on %s', (engine) => {
  let t: TestApp;
  let dir: string;
  let base: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-dbip-'));
    const file = path.join(dir, 'dbip-country-lite.mmdb');
    // Each full address in a country of its own, and its /24 or /48 in another: the country must come from the
    // full address, before it is shortened.
    writeFileSync(
      file,
      buildCountryMmdb(
        [
          ['127.0.0.0/32', 'BE'],
          ['127.0.0.1/32', 'NL'],
          ['203.0.113.0/32', 'BE'],
          ['203.0.113.77/32', 'JP'],
          ['2001:db8:85a3::/64', 'BE'],
          ['2001:db8:85a3:1::/64', 'US'],
        ],
        'dbip',
      ),
    );
    t = await createTestApp(engine, {
      clock: new TestClock(T0),
      env: { IP_ANONYMIZE: 'true', GEOIP_DATABASE: file },
      deps: steadyFeed,
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when visits come from IPv4, IPv4-mapped IPv6 and IPv6 addresses, then each country is the full address’s and the address is kept as its /24 or /48', async () => {
    const link = await createLink(t);
    const go = async (remoteAddress: string) =>
      expect(
        (await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': HUMAN_UA }, remoteAddress })).status,
      ).toBe(302);
    await go('203.0.113.77');
    await go('::ffff:203.0.113.77');
    await go('2001:db8:85a3:1:2:3:4:5');
    // and over a socket from 127.0.0.1: the fast path (the link is cached by now)
    expect(
      (await fetch(`${base}/${link.short_code}`, { headers: { 'user-agent': HUMAN_UA }, redirect: 'manual' })).status,
    ).toBe(302);
    const records = await clickRecords(t, link.id);
    expect(records.map((c) => [c.ip, c.country])).toEqual([
      ['203.0.113.0', 'JP'],
      ['203.0.113.0', 'JP'],
      ['2001:db8:85a3::', 'US'],
      ['127.0.0.0', 'NL'],
    ]);
    const stats = (await t.request({ url: `/api/v1/links/${link.short_code}/stats` })).body;
    expect(stats.top_countries).toEqual([
      { value: 'JP', clicks: 2 },
      { value: 'NL', clicks: 1 },
      { value: 'US', clicks: 1 },
    ]);
  });
});
