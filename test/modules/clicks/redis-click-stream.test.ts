import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickWriter } from '../../../src/modules/clicks/rollups/click-writer.js';
import { createClickStreamConsumer } from '../../../src/modules/clicks/transport/click-stream-consumer.js';
import {
  CLICK_GROUP,
  clickStreamKeys,
  decodeClick,
  ensureClickGroup,
  type KeyedClick,
} from '../../../src/modules/clicks/transport/click-stream.js';
import { clickWriterFor } from '../../../src/modules/clicks/click-ingest.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { recordCount, scaleOut, testRedis, waitFor } from '../../helpers/scale-out.js';
import { missing, unless } from '../../helpers/skip.js';
import { createLink } from '../../helpers/factories.js';

type Entries = Array<[string, string[]]>;

/**
 * The click stream (scale-out): producer, consumer group, claims and replays, against the real Redis and
 * PostgreSQL. The API's in-process consumer is off here (CLICK_WORKER_IN_PROCESS=false, the scale-out
 * default), so the test decides who consumes.
 */
describe.runIf(scaleOut)(unless(missing.scaleOut, 'the Redis click stream'), () => {
  let t: TestApp;
  let redis: Redis;
  let stream: string;
  beforeAll(async () => {
    // A second app starts in this process later (one event loop for both): load shedding is off here.
    t = await createTestApp('postgres', {
      env: {
        CLICK_WORKER_IN_PROCESS: 'false',
        CLICK_BATCH_SIZE: '50',
        TRUST_PROXY: 'true',
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      },
    });
    redis = testRedis();
    stream = clickStreamKeys(t.redisPrefix).stream;
  });
  afterAll(async () => {
    await redis.quit();
    await t.close();
  });

  const writer = (): ClickWriter => clickWriterFor(t.storage).replaySafe();
  const consumer = (claimIdleMs = 60_000) =>
    createClickStreamConsumer({
      redis: redis.duplicate(),
      prefix: t.redisPrefix,
      writer: writer(),
      batchSize: 50,
      flushMs: 60_000,
      claimIdleMs,
      log: t.app.log,
      clock: t.clock,
    });

  async function linkWithVisits(n: number): Promise<{ id: number; short_code: string }> {
    const link = await createLink(t, { original_url: 'https://example.com/stream' });
    const visits = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        t.app.inject({
          url: `/${link.short_code}`,
          headers: { 'x-forwarded-for': `203.0.113.${i}`, 'user-agent': `Mozilla/5.0 (ua-${i})` },
        }),
      ),
    );
    expect(visits.every((v) => v.statusCode === 302)).toBe(true);
    return link;
  }
  const pendingCount = async () => Number(((await redis.xpending(stream, CLICK_GROUP)) as [number])[0]);
  /** Reads entries as a consumer that never acknowledges them (a worker killed mid-batch). */
  const readAsDeadConsumer = async (count: number): Promise<Entries> => {
    await ensureClickGroup(redis, stream);
    const reply = (await redis.xreadgroup(
      'GROUP',
      CLICK_GROUP,
      'dead-worker',
      'COUNT',
      count,
      'STREAMS',
      stream,
      '>',
    )) as Array<[string, Entries]>;
    return reply[0]![1];
  };

  it('when a redirect is answered, then its click is already an entry of the stream, with its own key, and nothing is written yet', async () => {
    const link = await linkWithVisits(30);
    const entries = (await redis.xrange(stream, '-', '+')) as Entries;
    const clicks = entries
      .map(([, fields]) => decodeClick(fields))
      .filter((c): c is KeyedClick => c?.linkId === link.id);
    expect(clicks).toHaveLength(30);
    expect(new Set(clicks.map((c) => c.key)).size).toBe(30);
    expect(clicks.map((c) => c.userAgent).sort()).toEqual(
      Array.from({ length: 30 }, (_, i) => `Mozilla/5.0 (ua-${i})`).sort(),
    );
    expect(clicks[0]).toMatchObject({
      shortCode: link.short_code,
      referrer: null,
      ip: expect.stringMatching(/^203\.0\.113\./),
    });
    expect(t.app.clickQueue.status().depth).toBeGreaterThanOrEqual(30);
    expect(await recordCount(t, link.id)).toBe(0);
  });

  it('when a consumer drains the stream, then it writes every click once, acknowledges them and trims the stream', async () => {
    const link = await linkWithVisits(120); // more than two batches of 50
    const c = consumer();
    expect(await c.drain()).toBeGreaterThanOrEqual(120);
    expect(await recordCount(t, link.id)).toBe(120);
    expect(await pendingCount()).toBe(0);
    // 150 entries were added (these and the first test's); trimming drops whole nodes of 100 written ones.
    expect(await redis.xlen(stream)).toBeLessThanOrEqual(50);
    const stats = await t.request({ url: `/api/v1/links/${link.short_code}/stats` });
    expect(stats.body).toMatchObject({ total_clicks: 120, click_count: 120, unique_visitors: 120 });
    await t.app.clickQueue.flush(); // everything it enqueued is written: flush returns at once
    expect(t.app.clickQueue.status().depth).toBe(0);
    await c.stop();
  });

  it('when a consumer dies holding entries, then another claims them after CLICK_CLAIM_IDLE_MS and writes them once', async () => {
    const link = await linkWithVisits(40);
    const held = await readAsDeadConsumer(1000);
    expect(held.length).toBeGreaterThanOrEqual(40);
    expect(await pendingCount()).toBe(held.length);
    const c = consumer(500);
    await c.drain(); // the entries are not idle long enough yet: nothing to take over
    expect(await recordCount(t, link.id)).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 600));
    await c.drain();
    expect(await recordCount(t, link.id)).toBe(40);
    expect(await pendingCount()).toBe(0);
    const consumers = (await redis.xinfo('CONSUMERS', stream, CLICK_GROUP)) as unknown[][];
    const dead = consumers.find((x) => x[1] === 'dead-worker')!;
    expect(dead[3]).toBe(0); // its pending list was emptied by the claim
    await c.stop();
  });

  it('when a batch was committed but never acknowledged, then its replay is acknowledged without counting again', async () => {
    const link = await linkWithVisits(25);
    const held = await readAsDeadConsumer(1000);
    // The dead worker got as far as the commit.
    await writer().write(held.map(([, fields]) => decodeClick(fields)!));
    expect(await recordCount(t, link.id)).toBe(25);
    const c = consumer(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await c.drain();
    expect(await pendingCount()).toBe(0);
    expect(await recordCount(t, link.id)).toBe(25);
    const row = await t.storage.db
      .selectFrom('links')
      .select(['click_count', 'unique_visitors'])
      .where('id', '=', link.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ click_count: 25, unique_visitors: 25 });
    const hourly = await t.storage.db
      .selectFrom('link_click_hourly')
      .select((eb) => eb.fn.sum<number>('clicks').as('n'))
      .where('link_id', '=', link.id)
      .executeTakeFirstOrThrow();
    expect(Number(hourly.n)).toBe(25);
    await c.stop();
  });

  it('when two consumers write the same entries at the same time, then each click is counted once', async () => {
    const link = await linkWithVisits(60);
    const held = await readAsDeadConsumer(1000);
    const batch = held.map(([, fields]) => decodeClick(fields)!);
    await Promise.all([writer().write(batch), writer().write(batch), writer().write(batch.slice(10, 40))]);
    expect(await recordCount(t, link.id)).toBe(60);
    const row = await t.storage.db
      .selectFrom('links')
      .select('click_count')
      .where('id', '=', link.id)
      .executeTakeFirstOrThrow();
    expect(row.click_count).toBe(60);
    await redis.xack(stream, CLICK_GROUP, ...held.map(([id]) => id));
  });

  it('when an entry is not a click, then it is acknowledged and logged, and the clicks around it are written', async () => {
    const link = await linkWithVisits(3);
    await redis.xadd(stream, '*', 'c', '{not json');
    await redis.xadd(stream, '*', 'other', 'field');
    const c = consumer();
    await c.drain();
    expect(await recordCount(t, link.id)).toBe(3);
    expect(await pendingCount()).toBe(0);
    await c.stop();
  });

  it('when the backlog reaches CLICK_QUEUE_LIMIT, then further clicks are dropped and counted, and redirects still answer', async () => {
    const small = await createTestApp('postgres', {
      env: { CLICK_WORKER_IN_PROCESS: 'false', CLICK_QUEUE_LIMIT: '100' },
    });
    try {
      const link = await createLink(small, { original_url: 'https://example.com/full' });
      const visits = await Promise.all(
        Array.from({ length: 130 }, () => small.app.inject({ url: `/${link.short_code}` })),
      );
      expect(visits.every((v) => v.statusCode === 302)).toBe(true);
      expect(await redis.xlen(clickStreamKeys(small.redisPrefix).stream)).toBe(100);
      expect(small.app.clickQueue.status().dropped).toBe(30);
      expect(small.app.clickQueue.status().depth).toBe(100);
      await waitFor('the metrics', async () =>
        (await small.request({ url: '/metrics' })).text.includes('ferry_clicks_dropped_total 30'),
      );
    } finally {
      await small.close();
    }
  });
});
