/**
 * Click ingestion, end to end inside one process (spawned by bench/run.ts): Ferry's own in-process click
 * queue (CLICK_FLUSH_MS, CLICK_BATCH_SIZE, CLICK_QUEUE_LIMIT at their defaults unless set) feeding Ferry's
 * click writer (on SQLite: the writer thread) on a database seeded with the links of DATA_DIR.
 *
 * A producer keeps a few batches waiting in the queue (it never fills it: a drop would be the writer's
 * fault, and none is allowed) and otherwise sleeps, so that it measures the writer, not itself, for DURATION
 * seconds. Every visit is drawn afresh: a recycled set of visits (50,000 until 2026-11-25) made visitors and
 * daily values repeat, which flattered the writer, large windows most; then the queue is flushed, the click records are counted, and the rate is records / (first
 * enqueue → last record written).
 * Prints one JSON line: { clicks, records, dropped, seconds, clicksPerSecond, cpuSeconds, writerCpuSeconds (on
 * SQLite and Linux, the writer thread's; null on PostgreSQL), peakRssBytes }.
 *
 * WORKERS=1,2 (with DATABASE_URL and REDIS_URL): the scale-out path instead, once per figure in the list: CLICKS
 * visits (200,000 by default) put in the Redis click stream, then drained by that many click workers
 * (bench/lib/stream-drain.ts); one JSON line { runs: [...] }, a run per figure: { workers, clicks, records,
 * counted, seconds, clicksPerSecond, workerCpuSeconds, peakRssBytes }.
 *
 * Env: DATA_DIR (seeded with links), or DATABASE_URL (PostgreSQL, an empty database: SEED_LINKS links are
 * created first, 100,000 by default), DURATION (s), MIX (`uniform`: every link equally likely, the worst
 * case for the rollups; `zipf`: the link of popularity rank k with probability ∝ 1/k, as web traffic
 * roughly is; `hot`: every visit on one link), BOTS=1 (every visit without a User-Agent, so a bot's: record,
 * hour and link only, as in the redirect benchmark's), and Ferry's own CLICK_* variables.
 */
import { sql, type Kysely } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { createStorage } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import type { ClickEvent } from '../src/modules/clicks/event/click-event.js';
import { createMemoryClickQueue } from '../src/modules/clicks/transport/memory-click-queue.js';
import { systemClock } from '../src/lib/clock.js';
import { clickWriterFor } from '../src/modules/clicks/click-ingest.js';
import { peakRssBytes, threadCpuSeconds } from './lib/proc.js';
import { seedLinksPortable } from './lib/seed.js';
import { drainStream } from './lib/stream-drain.js';

const config = loadConfig(process.env);
const duration = Number(process.env.DURATION ?? 5) * 1000;
const mix = process.env.MIX ?? 'uniform';

const storage = createStorage(config);
if (config.databaseUrl !== null) {
  await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  await seedLinksPortable(storage.db, Number(process.env.SEED_LINKS ?? 100_000), Date.now());
  // The seed's write-ahead log made durable before the clock starts: a checkpoint it set off would otherwise fall
  // at a random point of the measured drain (rates of one build moved by half from run to run).
  await sql`checkpoint`.execute(storage.db);
}
const codes: string[] = [];
const linkIds: number[] = [];
for (const row of await storage.db.selectFrom('links').select(['id', 'short_code']).orderBy('id').execute()) {
  codes.push(row.short_code);
  linkIds.push(Number(row.id));
}

const repository = clickWriterFor(storage);
const queue = createMemoryClickQueue({
  writer: repository.writer,
  flushMs: config.clickFlushMs,
  batchSize: config.clickBatchSize,
  limit: config.clickQueueLimit,
  log: pino({ level: 'warn' }),
  clock: systemClock,
});

// A realistic mix: 20,000 client addresses, 30 user agents, 60 referrer origins (a fifth of visits have none).
const ips = Array.from({ length: 20_000 }, (_, i) => `198.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
const agents = Array.from(
  { length: 30 },
  (_, i) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${100 + i}.0 Safari/537.36`,
);
const referrers = Array.from({ length: 60 }, (_, i) => `https://site${i}.example/some/page?id=${i}`);
const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;

// Zipf(1): the cumulative weights of ranks 1..n, searched with a uniform draw.
const cumulative = new Float64Array(codes.length);
for (let k = 0, sum = 0; k < codes.length; k += 1) cumulative[k] = sum += 1 / (k + 1);
function zipfRank(): number {
  const u = Math.random() * cumulative[codes.length - 1]!;
  let lo = 0;
  let hi = codes.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function visit(): ClickEvent {
  const i = mix === 'hot' ? 0 : mix === 'zipf' ? zipfRank() : Math.floor(Math.random() * codes.length);
  return {
    linkId: linkIds[i]!,
    shortCode: codes[i]!,
    clickedAt: Date.now(),
    ip: pick(ips),
    userAgent: process.env.BOTS ? null : pick(agents),
    referrer: Math.random() < 0.2 ? null : pick(referrers),
  };
}

if (process.env.WORKERS) {
  if (config.databaseUrl === null || config.redisUrl === null)
    throw new Error('WORKERS needs DATABASE_URL and REDIS_URL');
  const runs = [];
  for (const workers of process.env.WORKERS.split(',').map(Number)) {
    const env = { DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, LOG_LEVEL: 'warn' };
    runs.push(
      await drainStream({
        db: storage.db,
        redisUrl: config.redisUrl,
        prefix: `bench-ingest-${process.pid}:`,
        workers,
        clicks: Number(process.env.CLICKS ?? 200_000),
        visit,
        env,
      }),
    );
    process.stderr.write(`${JSON.stringify(runs.at(-1))}\n`);
  }
  process.stdout.write(`${JSON.stringify({ runs })}\n`);
  await storage.close();
  process.exit(0);
}

const cpuBefore = process.cpuUsage();
const threadsBefore = threadCpuSeconds();
const started = performance.now();
let enqueued = 0;
// A few writes' worth waiting: batches, or for a window writer (the embedded engine's thread) a window.
const highWater = Math.min(
  config.clickQueueLimit / 2,
  Math.max(4 * config.clickBatchSize, 2 * (repository.writer.window ?? 0)),
);
while (performance.now() - started < duration) {
  while (queue.depth() < highWater) {
    if (queue.enqueue(visit())) enqueued += 1;
  }
  await new Promise((resolve) => setTimeout(resolve, 1));
}
await queue.flush();
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
// On SQLite, the writer thread: of the threads but the main one (the producer), the one that used the most
// CPU during the run. Read before the queue closes it.
const threadsAfter = threadCpuSeconds();
const writerCpuSeconds =
  config.databaseUrl !== null
    ? null
    : Math.max(
        0,
        ...[...threadsAfter]
          .filter(([tid]) => tid !== process.pid)
          .map(([tid, s]) => s - (threadsBefore.get(tid) ?? 0)),
      );
const records = Number(
  (
    await storage.db
      .selectFrom('clicks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
  ).n,
);
const counted = Number(
  (
    await storage.db
      .selectFrom('links')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('click_count'), eb.lit(0)).as('n'))
      .executeTakeFirstOrThrow()
  ).n,
);
await queue.close();
await repository.close();
await storage.close();
process.stdout.write(
  `${JSON.stringify({
    clicks: enqueued,
    records,
    counted,
    dropped: queue.status().dropped,
    seconds,
    clicksPerSecond: records / seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    writerCpuSeconds,
    peakRssBytes: peakRssBytes(process.pid),
  })}\n`,
);
