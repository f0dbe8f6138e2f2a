/**
 * `redirect-redis` (issue 37 item 3): the redirect of one API instance in the scale-out setup (PostgreSQL and
 * Redis, CLICK_WORKER_IN_PROCESS=false: every click is an XADD to the stream, auto-pipelined with the turn's
 * other commands, src/infra/redis-turn.ts, and the redirect answers once Redis has it) against the embedded
 * redirect (SQLite, the click journal, the `redirect-browser` server) in alternating rounds of the same run.
 * Both serve 100,000 links, uniformly random codes, a browser's User-Agent, their caches warmed by a pass over
 * every code. The row's "× baseline" is over the embedded redirect's rounds.
 *
 * The stream is drained after the rounds by one click worker (src/worker.ts), and every redirect the instance
 * answered must be a click record once (the same check as the embedded rows'). Needs PostgreSQL and Redis
 * (BENCH_PG_URL, BENCH_REDIS_URL as for ingest-pg); without them the row says so and measures nothing.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import { createStorage } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import type { Database } from '../src/db/types.js';
import { clickGroupInfo, clickStreamKeys } from '../src/modules/clicks/transport/click-stream.js';
import { abandonedCount, clickVerdict, drive, load, redirectCount, rowOf, type Workload } from './lib/drive.js';
import { peakRssBytes, ROOT, stopServer } from './lib/proc.js';
import { notMeasured } from './lib/report.js';
import { seedLinksPortable } from './lib/seed.js';
import { freshDatabase, REDIS_URL, redisMissing } from './ingest-scaleout.js';
import { profileOf, startFerry, type BenchContext, type Scenario } from './scenarios.js';

const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';

/** 100,000 anonymous links in the fresh database (its own codes, in a codes file for the load generator). */
async function seed(ctx: BenchContext, url: string): Promise<string> {
  const storage = createStorage({ databaseUrl: url, dataDir: ctx.work, dbPoolMax: 2 });
  try {
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
    const codes = await seedLinksPortable(storage.db, 100_000, Date.now());
    const file = path.join(ctx.work, 'redirect-redis.codes');
    writeFileSync(file, codes.join('\n'));
    return file;
  } finally {
    await storage.close();
  }
}

/** One click worker until the stream's group has nothing pending or undelivered; then the records counted. */
async function drainAndCount(url: string, prefix: string): Promise<{ records: number; counted: number }> {
  const worker = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, REDIS_URL, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const redis = new Redis(REDIS_URL);
  const { stream, lastWrite } = clickStreamKeys(prefix);
  try {
    for (;;) {
      const info = await clickGroupInfo(redis, stream);
      if (info && Number(info.pending) + Number(info.lag ?? 0) === 0) break;
      if (worker.exitCode !== null) throw new Error('the click worker exited during the drain');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    const exited = once(worker, 'exit');
    worker.kill('SIGTERM');
    await exited;
    await redis.del(stream, lastWrite);
    redis.disconnect();
  }
  const storage = createStorage({ databaseUrl: url, dataDir: '.', dbPoolMax: 1 });
  try {
    const { rows } = await sql<{ records: string; counted: string }>`select (select count(*) from clicks) as records,
      (select coalesce(sum(click_count), 0) from links) as counted`.execute(storage.db as Kysely<Database>);
    return { records: Number(rows[0]!.records), counted: Number(rows[0]!.counted) };
  } finally {
    await storage.close();
  }
}

export const redirectRedis: Scenario = {
  name: 'redirect-redis',
  needs: ['links100k'],
  describe: () =>
    'GET /{code} on one instance with PostgreSQL + Redis (clicks to the stream) against the embedded redirect, alternating rounds',
  async run(ctx: BenchContext) {
    const missing = await redisMissing();
    const db = missing === null ? await freshDatabase() : missing;
    if (typeof db === 'string') return { row: notMeasured('redirect-redis', 'req/s', db) };
    const prefix = `bench-redirect-${process.pid}:`;
    try {
      const codes = await seed(ctx, db.url);
      const headers = { 'user-agent': BROWSER_UA };
      const embeddedSpec: Workload = { workload: 'codes', codesFile: ctx.data.files.links100k!.codes, headers };
      const server = await startFerry(ctx, 'redirect-redis', null, {
        DATABASE_URL: db.url,
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        CLICK_WORKER_IN_PROCESS: 'false',
      });
      const spec: Workload = { workload: 'codes', codesFile: codes, headers };
      await load(ctx, server, { ...spec, amount: 100_000 }, 0);
      await load(ctx, server, spec, ctx.warmup);
      const embedded = await startFerry(ctx, 'redirect-embedded', 'links100k', {});
      // The embedded server leads (drive() drains its writer before each of the Redis instance's rounds); the
      // Redis instance's clicks wait in the stream until the drain below, as they would during a worker outage.
      const m = await drive(ctx, embedded, embeddedSpec, {
        pass: { ...embeddedSpec, amount: 100_000 },
        paired: { server, spec },
      });
      const peakRss = peakRssBytes(server.child.pid);
      // Requests the load generator gave up waiting for are still answered (and counted) after its run: read the
      // count once it has stopped moving.
      let served = await redirectCount(server);
      for (let previous = -1; served !== previous;) {
        previous = served ?? -1;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        served = await redirectCount(server);
      }
      const abandoned = await abandonedCount(server);
      const exitCode = await stopServer(server.child);
      const { records, counted } = await drainAndCount(db.url, prefix);
      const check = clickVerdict(served, records, counted, abandoned);
      const row = rowOf(
        'redirect-redis',
        'GET /{code}, 100,000 links on PostgreSQL, random codes, browser User-Agent, one instance, clicks to the Redis stream (CLICK_WORKER_IN_PROCESS=false, one worker drains afterwards); × baseline: over the embedded redirect (SQLite, journal) in alternating rounds',
        m.paired,
        { expected: 302, notes: [check], peakRss, exitCode, baseline: m.slices },
      );
      const profile = profileOf(ctx, 'redirect-redis', m.paired);
      return { row, ...(profile ? { profile } : {}) };
    } finally {
      await db.drop();
    }
  },
};
