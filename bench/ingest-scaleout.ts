/**
 * The scale-out click path in `npm run bench` (issue 37 item 3): bench/ingest.ts with WORKERS=1,2 on a fresh
 * PostgreSQL database and Redis, the same visits as ingest-uniform (browsers, uniform over 100,000 links).
 * bench/run.ts sets each row's "× baseline" to its rate over ingest-uniform's in the same run (the embedded
 * writer), when that ran. Needs PostgreSQL (BENCH_PG_URL, an admin URL; default
 * postgres://postgres@127.0.0.1:5432/postgres) and Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379/14);
 * when either cannot be reached the rows say so and measure nothing.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { runJson } from './lib/proc.js';
import { notMeasured, type Row } from './lib/report.js';
import type { DrainResult } from './lib/stream-drain.js';
import type { BenchContext, Scenario } from './scenarios.js';

export const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';

/** A fresh database on the admin URL's server (dropped by `drop`), or why there is none. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> } | string> {
  const name = `ferry_bench_ingest_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
  } catch (err) {
    return `PostgreSQL at BENCH_PG_URL unreachable (${(err as Error).message})`;
  } finally {
    await admin.end().catch(() => undefined);
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const drop = async () => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  };
  return { url: url.toString(), drop };
}

export async function redisMissing(): Promise<string | null> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    return null;
  } catch (err) {
    return `Redis at BENCH_REDIS_URL unreachable (${(err as Error).message})`;
  } finally {
    redis.disconnect();
  }
}

const rowOf = (r: DrainResult): Row => ({
  name: `ingest-pg-${r.workers}w`,
  setup: `uniformly random links of 100,000, browsers; Redis stream drained by ${r.workers} click worker${r.workers > 1 ? 's' : ''} into PostgreSQL; × baseline: over ingest-uniform (embedded writer)`,
  perSecond: r.clicksPerSecond,
  unit: 'clicks/s',
  latencyMs: null,
  errors: r.clicks - r.records + Math.abs(r.clicks - r.counted),
  cpuUsPerRequest: (r.workerCpuSeconds * 1e6) / r.records,
  cpuCores: r.workerCpuSeconds / r.seconds,
  mainCpuUsPerRequest: null,
  peakRssBytes: r.peakRssBytes,
  notes:
    `${r.clicks} in the stream, ${r.records} records, click_count sum ${r.counted}, ${r.seconds.toFixed(1)} s to drain; CPU column: the workers'; ` +
    `with PostgreSQL's backends ${(((r.workerCpuSeconds + r.pgCpuSeconds) * 1e6) / r.records).toFixed(0)} µs per click`,
});

export const ingestScaleOut: Scenario = {
  name: 'ingest-pg',
  needs: [],
  describe: () =>
    'click stream → 1 and 2 click workers → PostgreSQL, the visits of ingest-uniform; records counted after the drain',
  async run(ctx: BenchContext) {
    const missing = await redisMissing();
    const db = missing === null ? await freshDatabase() : missing;
    if (typeof db === 'string') return { row: notMeasured('ingest-pg-2w', 'clicks/s', db) };
    try {
      const clicks = String(Math.max(60_000, 20_000 * ctx.duration));
      const { result } = await runJson<{ runs: DrainResult[] }>(['--import', 'tsx', 'bench/ingest.ts'], {
        DATABASE_URL: db.url,
        REDIS_URL,
        WORKERS: '1,2',
        CLICKS: clicks,
        MIX: 'uniform',
        LOG_LEVEL: 'warn',
      });
      const [one, ...more] = result.runs.map(rowOf);
      return { row: one!, more };
    } finally {
      await db.drop();
    }
  },
};
