import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickStreamKeys, decodeClick } from '../../../src/modules/clicks/transport/click-stream.js';
import { createTestApp, engines, type TestApp } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { sendAndReset } from '../../helpers/raw-http.js';
import { scaleOut, testRedis, waitFor } from '../../helpers/scale-out.js';
import { missing, unless } from '../../helpers/skip.js';
import { clickRecords, createLink } from '../../helpers/factories.js';

/**
 * The redirect's fast path (redirect-fast-path.ts) only exists on a real socket: app.inject() goes straight
 * to Fastify. These tests send the same requests both ways and expect the same answers, clicks and metrics.
 */
/**
 * On PostgreSQL the cache is served only while the outbox feed's last proof is fresh (outbox-feed.ts): on a
 * loaded machine a late heartbeat sent a visit to the route. These tests are of the fast path, not of the feed
 * (test/scaleout/link-cache-invalidation.test.ts is), so the proof is trusted for a minute here.
 */
const steadyFeed = { linkChangeFeed: { trustMs: 60_000 } };

describe.each(engines)('redirect fast path on %s', (engine) => {
  let base: string;
  // Counters in process, even in the scale-out run; the limit in Redis is the next suite's.
  const t = useTestApp(engine, { env: { REDIRECT_RATE_LIMIT_PER_MINUTE: '5' }, redisUrl: '', deps: steadyFeed });
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });

  const create = (payload: Record<string, unknown> = {}) =>
    createLink(t, { original_url: 'https://example.com/fast?a=1', ...payload });
  const overSocket = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, { redirect: 'manual', ...init });
  const metric = async (pattern: RegExp): Promise<number> =>
    Number(pattern.exec((await t.request({ url: '/metrics' })).text)?.[1] ?? 0);
  const redirectsCounted = () => metric(/^ferry_redirect_duration_seconds_count\{status_code="302"\} (\d+)$/m);
  const fastPathCounted = () => metric(/^ferry_redirect_fast_path_total (\d+)$/m);

  it('when a cached link is visited over a socket, then the answer, the click and the metrics are those of the route', async () => {
    const link = await create();
    const [counted, fastCounted] = [await redirectsCounted(), await fastPathCounted()];
    // Through Fastify first (it also puts the link in the cache), then over the socket (the fast path).
    const routed = await t.request({
      url: `/${link.short_code}`,
      remoteAddress: '127.0.0.1',
      headers: { 'user-agent': 'UA/1', referer: 'https://ref.example/p' },
    });
    const fast = await overSocket(`/${link.short_code}`, {
      headers: { 'user-agent': 'UA/2', referer: 'https://ref.example/q', 'x-request-id': 'client-id-1' },
    });
    expect(fast.status).toBe(routed.status);
    const names = (h: Iterable<[string, string]>) =>
      [...h]
        .map(([k]) => k.toLowerCase())
        .filter((k) => !['date', 'connection', 'keep-alive'].includes(k))
        .sort();
    expect(names(fast.headers)).toEqual(names(Object.entries(routed.headers).map(([k, v]) => [k, String(v)])));
    for (const h of ['location', 'cache-control', 'ratelimit-policy', 'content-length'])
      expect(fast.headers.get(h)).toBe(String(routed.headers[h]));
    expect(fast.headers.get('x-request-id')).toBe('client-id-1');
    // One counter for both paths: the route took the first of 5, the fast path the second.
    expect(routed.headers.ratelimit).toMatch(/^"redirect";r=4;t=\d+$/);
    expect(fast.headers.get('ratelimit')).toMatch(/^"redirect";r=3;t=\d+$/);
    expect(await fast.text()).toBe('');
    const clicks = await clickRecords(t, link.id);
    expect(clicks.map((c) => [c.ip, c.user_agent, c.referrer])).toEqual([
      ['127.0.0.1', 'UA/1', 'https://ref.example/p'],
      ['127.0.0.1', 'UA/2', 'https://ref.example/q'],
    ]);
    expect(await redirectsCounted()).toBe(counted + 2);
    expect(await fastPathCounted()).toBe(fastCounted + 1); // the socket's request did take the fast path
  });

  it('when HEAD is sent over a socket, then the same headers and no click; when the limit is reached, then 429 from the route', async () => {
    const link = await create();
    await t.request({ url: `/${link.short_code}`, remoteAddress: '127.0.0.2' }); // cached now
    const head = await overSocket(`/${link.short_code}`, { method: 'HEAD' });
    expect(head.status).toBe(302);
    expect(head.headers.get('location')).toBe('https://example.com/fast?a=1');
    expect(head.headers.get('cache-control')).toBe('private, no-store');
    expect(await clickRecords(t, link.id)).toHaveLength(1);
    // 127.0.0.1 has used 3 of its 5 so far (this and the previous test): 2 more pass, then 429.
    expect((await overSocket(`/${link.short_code}`)).status).toBe(302);
    expect((await overSocket(`/${link.short_code}`)).status).toBe(302);
    const limited = await overSocket(`/${link.short_code}`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(limited.headers.get('x-request-id')).toBeTruthy();
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    expect(await clickRecords(t, link.id)).toHaveLength(3);
    expect(await fastPathCounted()).toBe(4); // the previous test's, HEAD and two GETs; not the 429
  });
});

describe.each(engines)('redirect fast path with routing rules on %s', (engine) => {
  let base: string;
  const t = useTestApp(engine, { redisUrl: '', deps: steadyFeed });
  const owner = useUser(t);
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  const CHROME_LINUX =
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
  const overSocket = (path: string, headers: Record<string, string>) =>
    fetch(`${base}${path}`, { redirect: 'manual', headers: { 'user-agent': CHROME_LINUX, ...headers } });
  const fastPathCounted = async (): Promise<number> =>
    Number(/^ferry_redirect_fast_path_total (\d+)$/m.exec((await t.request({ url: '/metrics' })).text)?.[1] ?? 0);

  it("when a cached link with rules is visited over a socket, then the fast path evaluates them per visitor: the route's rule, sticky variant, cookie and click", async () => {
    const link = await createLink(
      t,
      {
        original_url: 'https://example.com/none',
        rules: [
          { conditions: [{ type: 'language', values: ['de'] }], target: { url: 'https://example.com/de' } },
          {
            conditions: [{ type: 'device', values: ['desktop'] }],
            target: {
              split: [
                { url: 'https://example.com/a', weight: 50 },
                { url: 'https://example.com/b', weight: 50 },
              ],
            },
          },
        ],
      },
      owner.token,
    );
    const path = `/${link.short_code}`;
    // Through Fastify first (it puts the link in the cache), as a German speaker: the first rule.
    const routed = await t.request({ url: path, headers: { 'user-agent': CHROME_LINUX, 'accept-language': 'de-DE' } });
    expect(routed.headers.location).toBe('https://example.com/de');
    const counted = await fastPathCounted();
    const german = await overSocket(path, { 'accept-language': 'de-DE,de;q=0.9' });
    expect(german.status).toBe(302);
    expect(german.headers.get('location')).toBe('https://example.com/de');
    expect(german.headers.get('cache-control')).toBe('private, no-store');
    expect(german.headers.get('set-cookie')).toBeNull();
    // A desktop visitor without German: the split draws a variant and sets its cookie, as the route does.
    const first = await overSocket(path, { 'accept-language': 'en' });
    const cookie = first.headers.get('set-cookie')!;
    const variant = /^ferry_v_\d+=([^;]+); Path=\/[^;]+; Max-Age=2592000; HttpOnly; SameSite=Lax$/.exec(cookie)?.[1];
    expect(cookie.startsWith(`ferry_v_${link.id}=`)).toBe(true);
    expect(variant).toBeTruthy();
    expect(['https://example.com/a', 'https://example.com/b']).toContain(first.headers.get('location'));
    const again = await overSocket(path, { cookie: cookie.split(';', 1)[0]! });
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await fastPathCounted()).toBe(counted + 3); // each socket visit took the fast path
    const { rules } = (await t.request({ url: `/api/v1/links/${link.short_code}/rules`, token: owner.token })).body;
    const clicks = await clickRecords(t, link.id);
    expect(clicks.map((c) => [c.rule_id, c.variant_id])).toEqual([
      [rules[0].id, null],
      [rules[0].id, null],
      [rules[1].id, variant],
      [rules[1].id, variant],
    ]);
  });
});

/**
 * A connection in MONITOR mode, once it is (its `monitoring` event). Not ioredis's `monitor()`: it enters the mode
 * when the promise of MONITOR's OK settles, so a monitored line that arrives in the same chunk as the OK (other
 * test files' traffic on the same server) is taken for the reply to no command, and `monitor()` rejects with
 * "Command queue state error" (DataHandler.shiftCommand); so do the lines that arrive after a disconnect. Those
 * lines were sent before the caller's first command or after its last: they are ignored here.
 */
async function monitorOf(redis: Redis): Promise<Redis> {
  const monitor = redis.duplicate({ monitor: true, lazyConnect: true });
  monitor.on('error', () => undefined);
  const monitoring = new Promise((resolve) => monitor.once('monitoring', resolve));
  await monitor.connect();
  await monitoring;
  return monitor;
}

describe.skipIf(missing.redis !== null).each(engines)(
  unless(missing.redis, 'redirect fast path with the limit in Redis, on %s'),
  (engine) => {
    let t: TestApp;
    let base: string;
    let redis: Redis;
    const prefix = `test-${randomUUID()}:`;
    beforeAll(async () => {
      redis = new Redis(process.env.TEST_REDIS_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      await new Promise((resolve) => redis.once('ready', resolve));
      t = await createTestApp(engine, {
        env: { REDIRECT_RATE_LIMIT_PER_MINUTE: '3' },
        deps: { rateLimitStore: { redis, keyPrefix: prefix }, ...steadyFeed },
      });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await t.close();
      await redis.del(`${prefix}ratelimit:redirect:ip:127.0.0.1`);
      redis.disconnect();
    });

    it('when a cached link is visited over a socket, then the fast path answers on the shared count; past the limit the route answers 429, counted once, with no click', async () => {
      const link = await createLink(t, { original_url: 'https://example.com/shared' });
      const fastPathCounted = async () =>
        Number(/^ferry_redirect_fast_path_total (\d+)$/m.exec((await t.request({ url: '/metrics' })).text)?.[1] ?? 0);
      const routed = await t.request({ url: `/${link.short_code}`, remoteAddress: '127.0.0.1' }); // caches the link
      expect(routed.status).toBe(302);
      expect(routed.headers.ratelimit).toMatch(/^"redirect";r=2;t=\d+$/);
      const fastBefore = await fastPathCounted();
      const visit = () => fetch(`${base}/${link.short_code}`, { redirect: 'manual' });
      const [second, third] = [await visit(), await visit()];
      expect([second.status, third.status]).toEqual([302, 302]);
      expect(
        [second.headers.get('ratelimit'), third.headers.get('ratelimit')].map((v) => v?.replace(/;t=\d+$/, '')),
      ).toEqual(['"redirect";r=1', '"redirect";r=0']);
      expect(second.headers.get('ratelimit-policy')).toBe('"redirect";q=3;w=60');
      expect(second.headers.get('location')).toBe('https://example.com/shared');
      expect(await fastPathCounted()).toBe(fastBefore + 2);

      const limited = await visit();
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(limited.headers.get('ratelimit')).toMatch(/^"redirect";r=0;t=\d+$/);
      expect(limited.headers.get('x-request-id')).toBeTruthy();
      expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
      expect(await fastPathCounted()).toBe(fastBefore + 2); // answered by the route
      // The fast path counted it and handed its verdict to the route's hook, which did not count it again.
      expect(await redis.get(`${prefix}ratelimit:redirect:ip:127.0.0.1`)).toBe('4');
      await t.app.clickQueue.flush();
      expect(
        await t.storage.db.selectFrom('clicks').select('id').where('link_id', '=', link.id).execute(),
      ).toHaveLength(3);
    });
  },
);

describe.runIf(scaleOut)(
  unless(missing.scaleOut, 'redirect fast path counting with its click in the Redis stream'),
  () => {
    let t: TestApp;
    let base: string;
    let redis: Redis;
    beforeAll(async () => {
      t = await createTestApp('postgres', {
        env: { REDIRECT_RATE_LIMIT_PER_MINUTE: '4', CLICK_WORKER_IN_PROCESS: 'false' },
        deps: steadyFeed,
      });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      redis = testRedis();
    });
    afterAll(async () => {
      await redis.quit();
      await t.close();
    });

    it('when cached visits arrive over a socket, then each is counted and its click added in one script run; past the limit the route answers 429, counted once, with no entry', async () => {
      const link = await createLink(t, { original_url: 'https://example.com/counted' });
      const counter = `${t.redisPrefix}ratelimit:redirect:ip:127.0.0.1`;
      const stream = clickStreamKeys(t.redisPrefix).stream;
      // What this app sends Redis, as the server runs it: commands of its own (not those its scripts run) that name the counter or add to the stream.
      const monitor = await monitorOf(redis);
      const sent: string[][] = [];
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source === 'lua') return;
        if (args.includes(counter) || (/^xadd$/i.test(args[0] ?? '') && args.includes(stream))) sent.push(args);
      });
      const routed = await t.request({ url: `/${link.short_code}`, remoteAddress: '127.0.0.1' }); // caches the link
      expect(routed.headers.ratelimit).toMatch(/^"redirect";r=3;t=\d+$/);
      const visit = () => fetch(`${base}/${link.short_code}`, { redirect: 'manual' });
      const together = await Promise.all([visit(), visit()]); // likely one turn: one script run for both
      const third = await visit();
      expect([...together, third].map((r) => r.status)).toEqual([302, 302, 302]);
      expect([...together, third].map((r) => r.headers.get('ratelimit')?.replace(/;t=\d+$/, '')).sort()).toEqual([
        '"redirect";r=0',
        '"redirect";r=1',
        '"redirect";r=2',
      ]);
      expect(third.headers.get('location')).toBe('https://example.com/counted');

      const limited = await visit();
      expect(limited.status).toBe(429);
      expect(limited.headers.get('ratelimit')).toMatch(/^"redirect";r=0;t=\d+$/);
      expect(limited.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
      monitor.disconnect();
      // Every count was a script run, the fast path's four each with its click's append (the route's first
      // counts in its hook, and its click is appended after the answer's handler): no separate INCRBY or XADD.
      expect(sent.map((args) => args[0]!.toLowerCase()).every((c) => c === 'evalsha' || c === 'eval')).toBe(true);
      expect(sent.filter((args) => args.includes(counter) && args.includes(stream)).length).toBeGreaterThanOrEqual(3);
      // Counted once each (the route's first, three fast, the one past the limit); its window expires.
      expect(await redis.get(counter)).toBe('5');
      expect(await redis.pttl(counter)).toBeGreaterThan(0);
      // Answered visits are entries of the stream already; the one past the limit is not.
      const entries = (await redis.xrange(clickStreamKeys(t.redisPrefix).stream, '-', '+')) as Array<
        [string, string[]]
      >;
      expect(entries.map(([, fields]) => decodeClick(fields)).filter((c) => c?.linkId === link.id)).toHaveLength(4);
    });
  },
);

describe.each(engines)('redirect answers the fast path leaves to the route, on %s', (engine) => {
  it('when the code is unknown, expired, carries a query string, or a proxy is trusted, then the route answers over the socket', async () => {
    const t = await createTestApp(engine, { env: { TRUST_PROXY: 'true' } });
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      const link = await createLink(t, { original_url: 'https://example.com/p' });
      await t.request({ url: `/${link.short_code}` }); // cached
      const res = await fetch(`${base}/${link.short_code}?utm=1`, {
        redirect: 'manual',
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      expect(res.status).toBe(302);
      const forwarded = await fetch(`${base}/${link.short_code}`, {
        redirect: 'manual',
        headers: { 'x-forwarded-for': '203.0.113.7' },
      });
      expect(forwarded.status).toBe(302);
      await t.app.clickQueue.flush();
      const ips = (
        await t.storage.db.selectFrom('clicks').select('ip').where('link_id', '=', link.id).orderBy('id').execute()
      ).map((r) => r.ip);
      expect(ips).toEqual(['127.0.0.1', '203.0.113.9', '203.0.113.7']);
      const unknown = await fetch(`${base}/zzzzzzz9`, { redirect: 'manual' });
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
      expect((await t.request({ url: '/metrics' })).text).toMatch(/^ferry_redirect_fast_path_total 0$/m);
    } finally {
      await t.close();
    }
  });
});

describe.each(engines)('redirect fast path under overload on %s', (engine) => {
  it('when the overload guard sheds, then a cached link visited over a socket is shed too (503), not redirected', async () => {
    // A heap bound no process meets; the guard arms two samples (6 s) after start: time to create and cache a link,
    // which took more than 2 s on a machine at load 13.
    const t = await createTestApp(engine, {
      env: {
        OVERLOAD_MAX_HEAP_BYTES: String(1024 * 1024),
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
        OVERLOAD_SAMPLE_INTERVAL_MS: '3000',
      },
    });
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      const link = await createLink(t, { original_url: 'https://example.com/o' });
      expect((await fetch(`${base}/${link.short_code}`, { redirect: 'manual' })).status).toBe(302);
      let res = await fetch(`${base}/${link.short_code}`, { redirect: 'manual' });
      for (let i = 0; i < 400 && res.status === 302; i += 1) {
        await new Promise((r) => setTimeout(r, 50));
        res = await fetch(`${base}/${link.short_code}`, { redirect: 'manual' });
      }
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
    } finally {
      await t.close();
    }
  }, 60_000);
});

describe.each(engines)('visits abandoned before their answer, on %s', (engine) => {
  let base: string;
  const t = useTestApp(engine, { deps: steadyFeed });
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  const counted = async (pattern: RegExp): Promise<number> =>
    Number(pattern.exec((await t.request({ url: '/metrics' })).text)?.[1] ?? 0);
  /** Sends `request` and resets the connection once the server has it, not before. */
  const leave = (request: string) => sendAndReset(base, request, t.app.server);
  const abandoned = () => counted(/^ferry_redirects_abandoned_total (\d+)$/m);
  const answered = () => counted(/^ferry_redirect_duration_seconds_count\{status_code="302"\} (\d+)$/m);

  it('when a client leaves a visit before its answer, then ferry_redirects_abandoned_total counts it, not the answered', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/left' });
    const before = await answered();
    expect(await abandoned()).toBe(0);
    // The form's POST with a body that never finishes: the route is chosen, the visit waits, the client resets.
    const partial = [
      `POST /${link.short_code} HTTP/1.1`,
      'Host: 127.0.0.1',
      'Content-Type: application/x-www-form-urlencoded',
      'Content-Length: 100',
      '',
      'password=',
    ].join('\r\n');
    await leave(partial);
    await waitFor('the abandoned visit to be counted', async () => (await abandoned()) === 1, 5_000);
    // An API request left the same way is no visit.
    await leave(partial.replace(`/${link.short_code}`, '/api/v1/links').replace('form-urlencoded', 'json'));
    expect((await fetch(`${base}/${link.short_code}`, { redirect: 'manual' })).status).toBe(302);
    expect(await answered()).toBe(before + 1);
    expect(await abandoned()).toBe(1);
  });
});
