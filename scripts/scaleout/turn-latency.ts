/**
 * What a redirect on the scale-out path waits for in Redis, without HTTP or a load generator: event-loop turns
 * of BENCH_TURN_REQUESTS redirects (default 10, one address: the cluster bench's 10 connections from
 * 127.0.0.1), timed from the turn's start until every redirect of it could answer, in alternating blocks:
 *
 * - two steps: the limit's count (a run of the redirect's Redis turn, infra/redis-turn.ts), then the click's
 *   append (the next run), as the fast path would without the turn's gate;
 * - together: the count and the click in one run, the click gated by the count (SharedIpLimiter.admit with
 *   its record), as the fast path does.
 *
 *   npx tsx scripts/scaleout/turn-latency.ts       (BENCH_REDIS_URL, default redis://127.0.0.1:6379)
 */
import type { IncomingMessage } from 'node:http';
import { Redis } from 'ioredis';
import Fastify from 'fastify';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import { clickStreamKeys } from '../../src/modules/clicks/transport/click-stream.js';
import { createRedisClickQueue } from '../../src/modules/clicks/transport/redis-click-queue.js';
import { closeRedis, whenRedisReady } from '../../src/infra/redis.js';
import { RedisTurn } from '../../src/infra/redis-turn.js';
import { SharedIpLimiter } from '../../src/plugins/redirect-limit.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 3000);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 6);
const PER_TURN = Number(process.env.BENCH_TURN_REQUESTS ?? 10);
const prefix = `bench-turn:${process.pid}:`;
const ip = '127.0.0.1';

const redis = new Redis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
const log = Fastify({ logger: { level: 'warn' } }).log;
const turn = new RedisTurn(redis);
await whenRedisReady(turn.redis);
const queue = await createRedisClickQueue({
  redis,
  turn,
  prefix,
  limit: 10_000_000,
  claimIdleMs: 60_000,
  inProcessConsumer: false,
  flushMs: 1_000,
  batchSize: 1_000,
  log,
  clock: { now: Date.now },
  writer: {
    write: () => Promise.reject(new Error('the benchmark writes nothing: a click reached the fallback queue')),
  },
});
const limiter = new SharedIpLimiter('redirect', 1e12, turn, prefix);
const counter = `${prefix}ratelimit:redirect:ip:${ip}`;
const event = (): ClickEvent => ({
  linkId: 1,
  shortCode: 'abc',
  clickedAt: Date.now(),
  ip,
  userAgent: 'Mozilla/5.0 (bench)',
  referrer: null,
});

/** One redirect the two-step way: its count, then its click, then the answer. */
async function twoSteps(): Promise<void> {
  const reading = await new Promise((resolve) => turn.count(counter, 60_000, resolve));
  if (reading === null) throw new Error('redis did not answer');
  queue.enqueue(event());
  await queue.settled();
}

/** One redirect the way the fast path does it: its verdict with its click recorded in the same run. */
async function together(): Promise<void> {
  const field = await limiter.admit({} as IncomingMessage, ip, () => void queue.enqueue(event()));
  if (field === null) throw new Error('past the limit');
  await queue.settled();
}

/** µs per turn, each turn starting in a fresh macrotask, as a turn of requests does. */
async function block(redirect: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < TURNS; i += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    const started = performance.now();
    await Promise.all(Array.from({ length: PER_TURN }, redirect));
    times.push((performance.now() - started) * 1000);
  }
  return times;
}

const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const results = { twoSteps: [] as number[][], together: [] as number[][] };
await block(twoSteps);
await block(together); // warm-up
for (let b = 0; b < BLOCKS; b += 1) {
  results.twoSteps.push(await block(twoSteps));
  results.together.push(await block(together));
}
process.stdout.write(
  `${PER_TURN} redirects per turn, ${TURNS} turns per block, ${BLOCKS} blocks each, alternating; µs per turn\n`,
);
for (const [name, blocks] of Object.entries(results)) {
  const all = blocks.flat();
  process.stdout.write(
    `${name.padEnd(10)} median ${pct(all, 0.5).toFixed(0).padStart(5)}  p99 ${pct(all, 0.99).toFixed(0).padStart(5)}  (block medians ${blocks.map((x) => pct(x, 0.5).toFixed(0)).join(' ')})\n`,
  );
}
const ratio = pct(results.together.flat(), 0.5) / pct(results.twoSteps.flat(), 0.5);
process.stdout.write(`together / two steps, median: ${ratio.toFixed(2)}\n`);

await queue.close();
await closeRedis(turn.redis);
const keys = await redis.keys(`${prefix}*`);
if (keys.length) await redis.del(...keys);
await redis.del(clickStreamKeys(prefix).stream);
redis.disconnect();
