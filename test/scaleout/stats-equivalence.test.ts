import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, TestClock, type TestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';
import { recordCount, scaleOut, waitFor } from '../helpers/scale-out.js';
import { startWorker, type WorkerProcess } from '../helpers/worker-process.js';
import { UA } from '../modules/clicks/user-agents.js';
import { missing, unless } from '../helpers/skip.js';

const T0 = Date.parse('2026-05-04T08:00:00.000Z');
const HOUR = 3_600_000;

/** The same visits for every path: humans and bots, referrers or none, countries through the trusted proxy, over three days. */
const VISITS = Array.from({ length: 120 }, (_, i) => ({
  at: T0 + Math.floor((i / 120) * 60 * HOUR) + (i % 7) * 60_000,
  ip: `198.51.${100 + (i % 3)}.${i % 37}`,
  ua: [UA.chromeWindows, UA.safariIphone, UA.googlebot, UA.chromeWindows, UA.slackbot, UA.curl, UA.safariIphone][
    i % 7
  ]!,
  referer: i % 4 === 0 ? null : `https://site${i % 5}.example/p/${i}`,
  country: ['DE', 'FR', null, 'US', 'de'][i % 5],
  link: i % 3 === 0 ? 1 : 0,
  // SPEC §24: bots by their request (a prefetch) whatever the user agent, and HONOR_GPC's counts only; a HEAD
  // records no click at all (SPEC §6), every 11th visit
  method: i % 11 === 5 ? 'HEAD' : 'GET',
  signal: ([{ 'sec-purpose': 'prefetch;prerender' }, { purpose: 'prefetch' }, { 'sec-gpc': '1' }, { dnt: '1' }][
    i % 13
  ] ?? {}) as Record<string, string>,
}));

/**
 * Clicks a routing rule or a split chose (SPEC §21), enqueued as the redirect builds them (the rules engine sets
 * the policy's rule and variant): humans and bots, over two days; by_rule and by_variant must agree too.
 */
const ROUTED = Array.from({ length: 30 }, (_, i) => ({
  at: T0 + Math.floor((i / 30) * 40 * HOUR),
  ip: `203.0.113.${i % 9}`,
  ua: [UA.chromeWindows, UA.safariIphone, UA.googlebot][i % 3]!,
  rule: i % 4 === 3 ? null : `r${i % 2}`,
  variant: i % 4 < 2 ? `v${i % 3}` : null,
  link: i % 5 === 0 ? 1 : 0,
}));

const apps: TestApp[] = [];
const workers: WorkerProcess[] = [];
afterAll(async () => {
  for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
  for (const t of apps) await t.close();
}, 60_000);

/** Runs VISITS through one app; `settled` waits until its writer has written them all. Returns the answers to compare. */
async function run(t: TestApp, settled: (ids: number[]) => Promise<void>) {
  apps.push(t);
  const user = await createUser(t);
  const links: Array<{ id: number; short_code: string }> = [];
  for (let i = 0; i < 2; i += 1) {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: `https://example.com/eq${i}` },
      token: user.token,
    });
    links.push(res.body as { id: number; short_code: string });
  }
  for (const v of VISITS) {
    t.clock.ms = v.at;
    const headers: Record<string, string> = { 'x-forwarded-for': v.ip, 'user-agent': v.ua, ...v.signal };
    if (v.referer) headers.referer = v.referer;
    if (v.country) headers['cf-ipcountry'] = v.country;
    const res = await t.app.inject({
      method: v.method as 'GET' | 'HEAD',
      url: `/${links[v.link]!.short_code}`,
      headers,
    });
    expect(res.statusCode).toBe(302);
  }
  for (const r of ROUTED) {
    const link = links[r.link]!;
    const click = { linkId: link.id, shortCode: link.short_code, clickedAt: r.at, ip: r.ip, userAgent: r.ua };
    const routed = { ...(r.rule ? { ruleId: r.rule } : {}), ...(r.variant ? { variantId: r.variant } : {}) };
    expect(t.app.clickQueue.enqueue({ ...click, referrer: null, country: null, ...routed })).toBe(true);
  }
  await settled(links.map((l) => l.id));
  t.clock.ms = T0 + 4 * 24 * HOUR;
  const answers: unknown[] = [];
  for (const query of [
    '',
    '?interval=hour&from=2026-05-04T00:00:00Z&to=2026-05-07T00:00:00Z',
    '?tz=America/Los_Angeles',
  ]) {
    for (const l of links) {
      const res = await t.request({ url: `/api/v1/links/${l.short_code}/stats${query}`, token: user.token });
      expect(res.status, res.text).toBe(200);
      const { short_code: _code, data_fresh_as_of: fresh, ...rest } = res.body;
      expect(fresh).not.toBeNull();
      answers.push(rest);
    }
    const mine = await t.request({ url: `/api/v1/users/me/stats${query}`, token: user.token });
    expect(mine.status, mine.text).toBe(200);
    const { user_id: _id, data_fresh_as_of: _fresh, top_links: top, ...rest } = mine.body;
    answers.push(
      rest,
      top.map((x: { clicks: number }) => x.clicks),
    );
  }
  // The records too, in one order whatever the order each path wrote them in.
  const records = await t.storage.db
    .selectFrom('clicks')
    .select(['link_id', 'clicked_at', 'ip', 'user_agent', 'referrer', 'is_bot', 'browser', 'os', 'device', 'country'])
    .where(
      'link_id',
      'in',
      links.map((l) => l.id),
    )
    .execute();
  answers.push(
    records
      .map((r) =>
        JSON.stringify({
          ...r,
          link_id: links.findIndex((l) => l.id === Number(r.link_id)),
          clicked_at: Number(r.clicked_at),
          is_bot: Number(r.is_bot),
        }),
      )
      .sort(),
  );
  return answers;
}

const env = {
  TRUST_PROXY: '127.0.0.1',
  COUNTRY_HEADER: 'CF-IPCountry',
  TOKEN_TTL_SECONDS: '2592000',
  HONOR_GPC: 'true',
};

describe('statistics are the same whichever path wrote the clicks', () => {
  it.runIf(scaleOut)(
    unless(
      missing.scaleOut,
      'when the same visits go through SQLite in-process, PostgreSQL in-process and PostgreSQL + Redis stream + npm run worker, then every statistic is identical',
    ),
    { timeout: 240_000 },
    async () => {
      const flush = (t: TestApp) => () => t.app.clickQueue.flush();
      const sqlite = await createTestApp('sqlite', { clock: new TestClock(T0), env });
      const a = await run(sqlite, flush(sqlite));
      const pg = await createTestApp('postgres', { clock: new TestClock(T0), env, redisUrl: '' });
      const b = await run(pg, flush(pg));

      const streamed = await createTestApp('postgres', {
        clock: new TestClock(T0),
        env: { ...env, CLICK_WORKER_IN_PROCESS: 'false' },
      });
      const worker = await startWorker({
        DATABASE_URL: streamed.config.databaseUrl!,
        REDIS_URL: process.env.TEST_REDIS_URL!,
        REDIS_KEY_PREFIX: streamed.redisPrefix,
        CLICK_FLUSH_MS: '50',
        JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long!',
      });
      workers.push(worker);
      const c = await run(streamed, async (ids) => {
        await streamed.app.clickQueue.flush();
        await waitFor(
          'the worker to write every click',
          async () => {
            let n = 0;
            for (const id of ids) n += await recordCount(streamed, id);
            return n === VISITS.filter((v) => v.method === 'GET').length + ROUTED.length;
          },
          30_000,
        );
      });

      expect(a[0]).toMatchObject({ total_clicks: expect.any(Number), human_clicks: expect.any(Number) });
      expect((a[0] as { bot_clicks: number }).bot_clicks).toBeGreaterThan(0);
      expect((a[0] as { by_rule: unknown[] }).by_rule).toHaveLength(2);
      expect((a[0] as { by_variant: unknown[] }).by_variant).toHaveLength(2);
      // Every signal made its click: prefetch bots with their user agent, counts only with nothing of theirs; no HEAD did.
      const records = (a.at(-1) as string[]).map((r) => JSON.parse(r) as Record<string, unknown>);
      const gets = VISITS.filter((v) => v.method === 'GET');
      const countOnly = records.filter((r) => r.user_agent === null);
      expect(countOnly.length).toBe(gets.filter((v) => v.signal['sec-gpc'] || v.signal.dnt).length);
      expect(
        countOnly.every((r) => r.ip === null && r.referrer === null && r.country === null && r.device === null),
      ).toBe(true);
      expect(new Set(countOnly.map((r) => r.is_bot))).toEqual(new Set([0, 1]));
      const botUa = new Set<string>([UA.googlebot, UA.slackbot, UA.curl]);
      const signalledBots = gets.filter(
        (v) =>
          !botUa.has(v.ua) && (v.signal['sec-purpose'] || v.signal.purpose) && !v.signal['sec-gpc'] && !v.signal.dnt,
      ).length;
      expect(signalledBots).toBeGreaterThan(2);
      expect(
        records.filter((r) => r.is_bot === 1 && r.user_agent !== null && !botUa.has(r.user_agent as string)),
      ).toHaveLength(signalledBots);
      expect(b).toEqual(a);
      expect(c).toEqual(a);
    },
  );
});
