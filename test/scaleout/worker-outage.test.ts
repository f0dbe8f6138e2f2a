import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { clickStreamKeys } from '../../src/modules/clicks/transport/click-stream.js';
import { createTestApp } from '../helpers/app.js';
import { createLink } from '../helpers/factories.js';
import { scaleOut, testRedis, waitFor } from '../helpers/scale-out.js';
import { missing, unless } from '../helpers/skip.js';
import { startWorker, type WorkerProcess } from '../helpers/worker-process.js';

/**
 * A worker outage at full redirect load with the default settings (issue 37 item 3). No worker runs while one
 * API instance (no in-process consumer) answers redirects as fast as it can, 10 at a time: the stream must hold
 * every click (none dropped), and the default CLICK_QUEUE_LIMIT must hold two minutes at the rate this instance
 * just answered; then a worker starts and every click becomes one record.
 *
 * Compressed by default: a few seconds of load, the bound checked against that rate × 120 s (the volume a
 * two-minute outage at this rate produces). FERRY_LONG_TESTS=1 (set by .ci/run) makes the outage the real two
 * minutes, the stream holding all of it.
 *
 * The test app's clock stands still, so every click of the outage has the same `clicked_at`: the worst case for
 * the writer's replay guard (a lookup joined on the batch's time range went quadratic on it: 1,347 s in CI).
 */
const LONG = process.env.FERRY_LONG_TESTS === '1';
const OUTAGE_MS = LONG ? 120_000 : 3_000;
const TWO_MINUTES_S = 120;
const CONNECTIONS = 10;
const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';

const workers: WorkerProcess[] = [];
afterEach(() => {
  for (const w of workers.splice(0))
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
});

const OUTAGE = LONG ? 'two minutes' : 'a compressed outage';

describe.runIf(scaleOut)(unless(missing.scaleOut, 'a click worker outage at full redirect load'), () => {
  it(
    `when no worker runs for ${OUTAGE} of full redirect load, then the default bound holds two minutes of it, ` +
      'nothing is dropped, and a worker started afterwards writes every click once',
    { timeout: LONG ? 1_800_000 : 300_000 },
    async () => {
      // REDIS_URL as a server has it, so that the configuration's defaults are the scale-out setup's.
      const t = await createTestApp('postgres', {
        env: { CLICK_WORKER_IN_PROCESS: 'false', REDIS_URL: process.env.TEST_REDIS_URL! },
      });
      const redis = testRedis();
      try {
        // The default of the scale-out setup: no CLICK_QUEUE_LIMIT set here or by the test app.
        const defaults = loadConfig({
          DATABASE_URL: t.config.databaseUrl!,
          REDIS_URL: process.env.TEST_REDIS_URL!,
          JWT_SECRET: 'x'.repeat(32),
        });
        expect(t.config.clickQueueLimit).toBe(defaults.clickQueueLimit);
        const links: Array<{ short_code: string }> = [];
        for (let i = 0; i < 20; i += 1) links.push(await createLink(t, { original_url: `https://example.com/o/${i}` }));

        let served = 0;
        let other = 0;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: CONNECTIONS }, async (_, c) => {
            for (let i = c; performance.now() - started < OUTAGE_MS; i += CONNECTIONS) {
              const res = await t.app.inject({
                url: `/${links[i % links.length]!.short_code}`,
                headers: { 'user-agent': BROWSER_UA },
                remoteAddress: `198.51.100.${i % 250}`,
              });
              if (res.statusCode === 302) served += 1;
              else other += 1;
            }
          }),
        );
        const seconds = (performance.now() - started) / 1000;
        await t.app.clickQueue.flush().catch(() => undefined); // no consumer: only the appends in flight matter
        expect(other).toBe(0);
        expect(t.app.clickQueue.status().dropped).toBe(0);
        const { stream } = clickStreamKeys(t.redisPrefix);
        expect(await redis.xlen(stream)).toBe(served);
        // Two minutes at the rate just answered fit the default bound.
        const rate = served / seconds;
        expect(rate * TWO_MINUTES_S).toBeLessThanOrEqual(t.config.clickQueueLimit);

        const worker = await startWorker({
          DATABASE_URL: t.config.databaseUrl!,
          REDIS_URL: process.env.TEST_REDIS_URL!,
          REDIS_KEY_PREFIX: t.redisPrefix,
        });
        workers.push(worker);
        const totals = async () => {
          const { rows } = await sql<{ records: string; counted: string }>`select
            (select count(*) from clicks) as records, (select coalesce(sum(click_count), 0) from links) as counted`.execute(
            t.storage.db,
          );
          return { records: Number(rows[0]!.records), counted: Number(rows[0]!.counted) };
        };
        await waitFor(
          'the worker to write the outage backlog',
          async () => (await totals()).records >= served,
          LONG ? 1_500_000 : 240_000,
        );
        expect(await totals()).toEqual({ records: served, counted: served });
      } finally {
        await redis.quit();
        await t.close();
      }
    },
  );
});
