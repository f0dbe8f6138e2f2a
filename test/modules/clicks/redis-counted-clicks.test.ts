import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { clickStreamKeys, decodeClick } from '../../../src/modules/clicks/transport/click-stream.js';
import { createRedisClickQueue } from '../../../src/modules/clicks/transport/redis-click-queue.js';
import { closeRedis } from '../../../src/infra/redis.js';
import { RedisTurn, type CounterReading } from '../../../src/infra/redis-turn.js';
import { missing, unless } from '../../helpers/skip.js';

/**
 * The redirect's Redis turn (infra/redis-turn.ts) with the click stream appending through it: a turn's visits
 * counted against their counters (admit) and their clicks added in one script run, a click only when its visit
 * is within the limit.
 */
describe.skipIf(missing.redis !== null)(
  unless(missing.redis, 'clicks counted with their rate limit in one script run'),
  () => {
    let redis: Redis;
    let queue: Awaited<ReturnType<typeof createRedisClickQueue>>;
    let turn: RedisTurn;
    const prefix = `test-${randomUUID()}:`;
    const written: ClickEvent[] = [];
    beforeAll(async () => {
      redis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: 1 });
      turn = new RedisTurn(redis);
      queue = await createRedisClickQueue({
        redis,
        turn,
        prefix,
        limit: 1_000,
        claimIdleMs: 60_000,
        inProcessConsumer: false,
        flushMs: 60_000,
        batchSize: 100,
        log: Fastify({ logger: false }).log,
        clock: { now: Date.now },
        writer: { write: async (batch) => void written.push(...batch) },
      });
    });
    afterAll(async () => {
      await queue.close();
      await closeRedis(turn.redis);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    });

    const click = (linkId: number, ip: string): ClickEvent => ({
      linkId,
      shortCode: `c${linkId}`,
      clickedAt: Date.now(),
      ip,
      userAgent: null,
      referrer: null,
    });
    const counter = (ip: string) => `${prefix}ratelimit:redirect:ip:${ip}`;
    const visit = (linkId: number, ip: string) =>
      new Promise<CounterReading | null>((resolve) =>
        turn.admit(counter(ip), 60_000, 2, () => void queue.enqueue(click(linkId, ip)), resolve),
      );

    it('when one turn holds visits from two addresses, then each gets its place in its own count and only those within the limit become entries', async () => {
      // Interleaved, all in one turn: A, B, A, A, B.
      const visits = [
        ['10.0.0.1', 1],
        ['10.0.0.2', 2],
        ['10.0.0.1', 3],
        ['10.0.0.1', 4],
        ['10.0.0.2', 5],
      ] as const;
      const readings = await Promise.all(visits.map(([ip, linkId]) => visit(linkId, ip)));
      expect(readings.map((r) => r?.count)).toEqual([1, 1, 2, 3, 2]);
      for (const r of readings) expect(r!.ttlMs).toBeGreaterThan(55_000);
      expect(await redis.get(counter('10.0.0.1'))).toBe('3');
      expect(await redis.pttl(counter('10.0.0.2'))).toBeGreaterThan(55_000);

      const entries = (await redis.xrange(clickStreamKeys(prefix).stream, '-', '+')) as Array<[string, string[]]>;
      expect(entries.map(([, fields]) => decodeClick(fields)?.linkId)).toEqual([1, 2, 3, 5]); // not the third visit of A
      await queue.settled();
      expect(queue.status().depth).toBe(4);
      expect(queue.status().fellBack).toBe(0);
      expect(written).toHaveLength(0); // nothing went to the fallback writer

      // The next turn goes on counting from there.
      const next = await visit(6, '10.0.0.2');
      expect(next?.count).toBe(3);
      expect(await redis.xlen(clickStreamKeys(prefix).stream)).toBe(4);
    });
  },
);
