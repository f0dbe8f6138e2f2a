/**
 * bench/ingest.ts with WORKERS=n: the scale-out click path (docs/deployment.md) on PostgreSQL. CLICKS visits
 * are put in the Redis click stream first, as the API instances' redirects append them (encodeClick, one entry
 * each, with its key), then `n` click workers (src/worker.ts, each its own process) are started and the time
 * from the first entry delivered to the stream's backlog at 0 gives the rate. Filling first and draining alone
 * measures the workers, PostgreSQL and Redis, not the producer; the API instances that would feed a live
 * stream are left out (their redirect is measured by scripts/scaleout/cluster-bench.ts).
 *
 * After the drain every click must be a record once, and the links' click_count must sum to CLICKS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/types.js';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import {
  CLICK_FIELD,
  clickGroupInfo,
  clickStreamKeys,
  encodeClick,
} from '../../src/modules/clicks/transport/click-stream.js';
import { cpuSeconds, peakRssBytes, ROOT } from './proc.js';

const POLL_MS = 25;
const FILL_PIPELINE = 5_000;

export interface DrainResult {
  workers: number;
  clicks: number;
  records: number;
  counted: number;
  seconds: number;
  clicksPerSecond: number;
  /** the workers' CPU over the drain (all their threads), and their largest peak RSS */
  workerCpuSeconds: number;
  /**
   * the CPU of the PostgreSQL backends serving this database over the drain (Linux, server on this machine; 0
   * elsewhere): with the workers', what a click costs whatever else the machine runs
   */
  pgCpuSeconds: number;
  peakRssBytes: number | null;
}

async function fill(redis: Redis, stream: string, clicks: number, visit: () => ClickEvent): Promise<void> {
  for (let i = 0; i < clicks; i += FILL_PIPELINE) {
    const p = redis.pipeline();
    for (let j = i; j < Math.min(clicks, i + FILL_PIPELINE); j += 1)
      p.xadd(stream, '*', CLICK_FIELD, encodeClick({ ...visit(), key: randomUUID() }));
    await p.exec();
  }
}

/**
 * WORKER_ROOT: another checkout's worker (before/after a change, on the same database and stream).
 * WORKER_CPU_PROF_DIR: each worker runs with --cpu-prof and leaves its profile there
 * (`npx tsx bench/profile-summary.ts <file>` lists self time per function).
 */
function startWorker(env: Record<string, string>): ChildProcess {
  const root = process.env.WORKER_ROOT ?? ROOT;
  const prof = process.env.WORKER_CPU_PROF_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.WORKER_CPU_PROF_DIR}`]
    : [];
  return spawn(process.execPath, [...prof, '--import', 'tsx', 'src/worker.ts'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Polls the group until `test` holds of its entries-read and backlog (pending + lag); when it did. */
async function until(
  redis: Redis,
  stream: string,
  test: (read: number, backlog: number) => boolean,
  workers: ChildProcess[],
): Promise<number> {
  for (;;) {
    const info = await clickGroupInfo(redis, stream);
    const read = Number(info?.['entries-read'] ?? 0);
    const backlog = info ? Number(info.pending) + Number(info.lag ?? 0) : Number.POSITIVE_INFINITY;
    if (test(read, backlog)) return performance.now();
    if (workers.some((w) => w.exitCode !== null)) throw new Error('a click worker exited during the drain');
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Fills the stream, drains it with `workers` worker processes, checks every click became one record. */
export async function drainStream(opts: {
  db: Kysely<Database>;
  redisUrl: string;
  prefix: string;
  workers: number;
  clicks: number;
  visit: () => ClickEvent;
  env: Record<string, string>;
}): Promise<DrainResult> {
  const redis = new Redis(opts.redisUrl);
  const { stream, lastWrite } = clickStreamKeys(opts.prefix);
  await redis.del(stream, lastWrite);
  await fill(redis, stream, opts.clicks, opts.visit);
  const before = await totals(opts.db);
  const env = { ...opts.env, REDIS_KEY_PREFIX: opts.prefix, CLICK_WORKER_IN_PROCESS: 'false' };
  const workers = Array.from({ length: opts.workers }, () => startWorker(env));
  try {
    const started = await until(redis, stream, (read) => read > 0, workers);
    const cpuAtStart = workers.map((w) => cpuSeconds(w.pid) ?? 0);
    const pgAtStart = await backendCpu(opts.db);
    const ended = await until(redis, stream, (_, backlog) => backlog === 0, workers);
    const cpu = workers.reduce((sum, w, i) => sum + (cpuSeconds(w.pid) ?? 0) - cpuAtStart[i]!, 0);
    const pgCpu = [...(await backendCpu(opts.db))].reduce((sum, [pid, s]) => sum + s - (pgAtStart.get(pid) ?? 0), 0);
    const rss = Math.max(...workers.map((w) => peakRssBytes(w.pid) ?? 0));
    const after = await totals(opts.db);
    const seconds = (ended - started) / 1000;
    const records = after.records - before.records;
    return {
      workers: opts.workers,
      clicks: opts.clicks,
      records,
      counted: after.counted - before.counted,
      seconds,
      clicksPerSecond: records / seconds,
      workerCpuSeconds: cpu,
      pgCpuSeconds: pgCpu,
      peakRssBytes: rss || null,
    };
  } finally {
    await Promise.all(workers.map(stop));
    await redis.del(stream, lastWrite);
    redis.disconnect();
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** CPU seconds so far of each PostgreSQL backend connected to this database, but the one asking. */
async function backendCpu(db: Kysely<Database>): Promise<Map<number, number>> {
  const { rows } = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`.execute(db);
  const out = new Map<number, number>();
  for (const { pid } of rows) out.set(pid, cpuSeconds(pid) ?? 0);
  return out;
}

async function totals(db: Kysely<Database>): Promise<{ records: number; counted: number }> {
  const { rows } = await sql<{ records: string; counted: string }>`select (select count(*) from clicks) as records,
    (select coalesce(sum(click_count), 0) from links) as counted`.execute(db);
  return { records: Number(rows[0]!.records), counted: Number(rows[0]!.counted) };
}
