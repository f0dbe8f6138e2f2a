import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLICK_FIELD,
  CLICK_GROUP,
  clickGroupInfo,
  clickStreamKeys,
  encodeClick,
} from '../../src/modules/clicks/transport/click-stream.js';
import { createTestApp } from '../helpers/app.js';
import { recordCount, scaleOut, testRedis, waitFor } from '../helpers/scale-out.js';
import { startWorker, type WorkerProcess } from '../helpers/worker-process.js';
import { missing, unless } from '../helpers/skip.js';
import { createLink } from '../helpers/factories.js';

const workers: WorkerProcess[] = [];
afterEach(() => {
  for (const w of workers.splice(0))
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
});

describe('the click worker process (npm run worker)', () => {
  it('when REDIS_URL or DATABASE_URL is missing, then it refuses to start, naming each, with exit code 1', async () => {
    const w = await startWorker({}, { ready: false });
    workers.push(w);
    expect((await w.exited).code).toBe(1);
    expect(w.stderr()).toContain('Invalid configuration: REDIS_URL: the click worker reads the Redis click stream');
    expect(w.stderr()).toContain('Invalid configuration: DATABASE_URL: the click worker writes to PostgreSQL');
  });

  it.runIf(scaleOut)(
    unless(
      missing.scaleOut,
      'when SIGTERM arrives mid-batch, then it writes and acknowledges that batch, exits 0, and the next worker writes the rest once',
    ),
    { timeout: 120_000 },
    async () => {
      const t = await createTestApp('postgres', { env: { CLICK_WORKER_IN_PROCESS: 'false' } });
      const redis = testRedis();
      try {
        const link = await createLink(t, { original_url: 'https://example.com/worker' });
        const { stream } = clickStreamKeys(t.redisPrefix);
        const total = 4000;
        const pipeline = redis.pipeline();
        for (let i = 0; i < total; i += 1) {
          const click = {
            key: randomUUID(),
            linkId: link.id,
            shortCode: link.short_code,
            clickedAt: t.clock.now(),
            ip: `198.51.100.${i % 200}`,
            userAgent: 'Mozilla/5.0 (worker test)',
            referrer: null,
          };
          pipeline.xadd(stream, '*', CLICK_FIELD, encodeClick(click));
        }
        await pipeline.exec();
        const env = {
          DATABASE_URL: t.config.databaseUrl!,
          REDIS_URL: process.env.TEST_REDIS_URL!,
          REDIS_KEY_PREFIX: t.redisPrefix,
          CLICK_BATCH_SIZE: '250',
          CLICK_FLUSH_MS: '50',
        };

        const first = await startWorker(env);
        workers.push(first);
        await waitFor('the first batch', async () => (await recordCount(t, link.id)) > 0);
        first.child.kill('SIGTERM');
        expect((await first.exited).code).toBe(0);
        const info = (await clickGroupInfo(redis, stream))!;
        const [pending] = (await redis.xpending(stream, CLICK_GROUP)) as [number];
        expect(pending).toBe(0); // nothing read was left unacknowledged
        const written = await recordCount(t, link.id);
        expect(written).toBe(Number(info['entries-read']));
        expect(written).toBeLessThan(total); // it stopped after its batch, not after the stream

        const second = await startWorker(env);
        workers.push(second);
        await waitFor('the rest', async () => (await recordCount(t, link.id)) === total, 20_000);
        second.child.kill('SIGTERM');
        expect((await second.exited).code).toBe(0);
        const row = await t.storage.db
          .selectFrom('links')
          .select(['click_count', 'unique_visitors'])
          .where('id', '=', link.id)
          .executeTakeFirstOrThrow();
        expect(row).toEqual({ click_count: total, unique_visitors: 200 });
      } finally {
        await redis.quit();
        await t.close();
      }
    },
  );
});
