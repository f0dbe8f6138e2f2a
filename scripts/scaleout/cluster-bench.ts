/**
 * Measurements behind the sizing table of docs/deployment.md: the scale-out setup as real processes on
 * loopback (compiled: run `npm run build` first), against a fresh PostgreSQL database and a private
 * redis-server.
 *
 *   npx tsx scripts/scaleout/cluster-bench.ts
 *
 * 1. Redirects, one API instance, PostgreSQL, no Redis (the in-process queue): the reference.
 * 2. Redirects, one API instance + one worker, PostgreSQL + Redis (each redirect waits for its XADD); the same
 *    with CLICK_WORKER_IN_PROCESS=false (the worker alone writes); then the first instance with the worker
 *    stopped (it consumes alone). Each instance is warmed up first (BENCH_WARMUP seconds of redirects).
 * 3. Redirects, two API instances + one worker (two load generators, half the connections each).
 * 4. Worker drain rate: 200,000 clicks already in the stream, one worker and then two, CLICK_BATCH_SIZE=1000.
 * 5. Orders (POST /api/v1/orders, a new Idempotency-Key each), one instance, DB_POOL_MAX 2, 5, 10, 20.
 * After 1–3 every answered redirect must be a click record (checked).
 *
 * Environment: BENCH_PG_URL (admin URL, default postgres://postgres@127.0.0.1:5432/test), BENCH_DURATION
 * (seconds per run, default 10), BENCH_CONNECTIONS (default 10), BENCH_LINKS (default 10000), BENCH_ONLY=redirects
 * (1 and 2 without 2b: the issue's scale-out ratio alone).
 *
 * BENCH_CPU_PROFILE_DIR=<dir>: every API instance runs with --cpu-prof and leaves its profile there (start-up and
 * warm-up included; `npx tsx bench/profile-summary.ts <file>` lists self time per function).
 *
 * BENCH_ONLY=rounds: the issue's ratio measured in alternating rounds instead (for a machine whose speed drifts
 * from one minute to the next): the PostgreSQL-alone instance and the Redis instance (worker only) run side by
 * side, each idle while the other is measured, BENCH_ROUNDS rounds (default 8) of BENCH_DURATION seconds; the
 * medians are compared. BENCH_COMPARE_ROOT=<another checkout, built> adds its Redis instance as a third arm
 * (before/after a change, in the same rounds).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon, { type Result } from 'autocannon';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { createStorage } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import {
  CLICK_FIELD,
  CLICK_GROUP,
  clickGroupInfo,
  clickStreamKeys,
  encodeClick,
} from '../../src/modules/clicks/transport/click-stream.js';
import { SERVER_ARGS } from '../../bench/lib/proc.js';
import { seedLinksPortable } from '../../bench/lib/seed.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** redirects before each measured redirect run: the schema compilers' warm-up after start and the link cache */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const LINKS = Number(process.env.BENCH_LINKS ?? 10_000);
const ONLY_REDIRECTS = process.env.BENCH_ONLY === 'redirects';
const ROUNDS = process.env.BENCH_ONLY === 'rounds' ? Number(process.env.BENCH_ROUNDS ?? 8) : 0;
const COMPARE_ROOT = process.env.BENCH_COMPARE_ROOT;
/** BENCH_CPU_PROFILE_DIR: each API instance writes a V8 CPU profile there when it stops (bench/profile-summary.ts reads it) */
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;
const PREFIX = 'bench:';
const log = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as net.AddressInfo;
  s.close();
  await once(s, 'close');
  return port;
}

async function waitPort(port: number, child: ChildProcess, name: string): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await sleep(100);
  }
  throw new Error(`${name} did not start`);
}

const children: ChildProcess[] = [];
async function api(env: Record<string, string>, root = ROOT): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const profile = CPU_PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROFILE_DIR}`];
  const child = spawn(process.execPath, [...profile, ...SERVER_ARGS], {
    cwd: root,
    env: { PATH: process.env.PATH, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  await waitPort(port, child, 'api');
  return { url: `http://127.0.0.1:${port}`, child };
}
function worker(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['dist/src/worker.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

async function freshDatabase(): Promise<string> {
  const name = `ferry_bench_${process.pid}_${Date.now()}`;
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * autocannon stops with one request in flight per connection and does not count their answers, whose clicks
 * the server did record: records = answered + at most one per connection.
 */
function check(what: string, recorded: number, answered: number, connections: number): void {
  if (recorded < answered || recorded > answered + connections)
    throw new Error(`${what}: ${recorded} click records for ${answered} answered redirects`);
}

const codes: string[] = [];
const pick = () => codes[Math.floor(Math.random() * codes.length)]!;
const redirects = (url: string, connections: number, duration = DURATION): Promise<Result> =>
  autocannon({
    url,
    connections,
    duration,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/${pick()}` }) }],
  });
/** The instance's own redirect histogram (its /metrics): cumulative 302 counts per bucket bound (seconds). */
async function redirectBuckets(url: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(/^ferry_redirect_duration_seconds_bucket\{([^}]*)\} (\d+)$/gm)) {
    const le = /le="([^"]+)"/.exec(m[1]!)![1]!;
    if (/status_code="302"/.test(m[1]!) && le !== '+Inf') buckets.set(Number(le), Number(m[2]));
  }
  return buckets;
}

/**
 * The 99th percentile of the redirects an instance answered between two snapshots, as the instance timed them
 * (from its handler's start to the answer, Redis round trips included), to the bound of its histogram's bucket:
 * what the client's p99 adds beyond it is queueing and scheduling on a shared machine.
 */
function serverP99(before: Map<number, number>, after: Map<number, number>): string {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = Math.max(...bounds.map((b) => after.get(b)! - (before.get(b) ?? 0)), 0);
  const p99 = bounds.find((b) => after.get(b)! - (before.get(b) ?? 0) >= 0.99 * total);
  return p99 === undefined ? '> 100 ms' : `<= ${p99 * 1000} ms`;
}

/** A measured run of redirects against one instance, with its server-side p99. */
async function measuredRedirects(url: string): Promise<Result & { serverP99: string }> {
  const before = await redirectBuckets(url);
  const r = await redirects(url, CONNECTIONS);
  return Object.assign(r, { serverP99: serverP99(before, await redirectBuckets(url)) });
}

const line = (label: string, r: { reqPerSec: number; p50: number; p99: number; extra?: string }) =>
  log(
    `${label.padEnd(60)} ${String(Math.round(r.reqPerSec)).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms${r.extra ? `  ${r.extra}` : ''}`,
  );

interface RoundsDeps {
  base: Record<string, string>;
  scaled: Record<string, string>;
  records(): Promise<number>;
  recordsAtRest(): Promise<number>;
  drained(): Promise<void>;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** BENCH_ONLY=rounds (see the top of this file). */
async function alternatingRounds(d: RoundsDeps): Promise<void> {
  const w = worker(d.scaled);
  const arms = [
    { label: '1 API, PostgreSQL, in-process click queue', ...(await api(d.base)) },
    {
      label: '1 API (CLICK_WORKER_IN_PROCESS=false) + 1 worker, Redis',
      ...(await api({ ...d.scaled, CLICK_WORKER_IN_PROCESS: 'false' })),
    },
    ...(COMPARE_ROOT
      ? [
          {
            label: `the same, built in ${COMPARE_ROOT}`,
            ...(await api({ ...d.scaled, CLICK_WORKER_IN_PROCESS: 'false' }, COMPARE_ROOT)),
          },
        ]
      : []),
  ].map((arm) => ({
    ...arm,
    rates: [] as number[],
    p50s: [] as number[],
    p99s: [] as number[],
    serverP99s: [] as string[],
  }));
  for (const arm of arms) await redirects(arm.url, CONNECTIONS, WARMUP);
  await d.drained();
  const before = await d.recordsAtRest();
  let answered = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    // Each round in another order, so that no arm always follows the same one.
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      // The worker drains what the Redis arm left in the stream before any arm is measured: it would otherwise
      // write the last round's clicks into the next one's (the PostgreSQL arm's, every other round).
      await d.drained();
      const r = await measuredRedirects(arm.url);
      arm.rates.push(r.requests.average);
      arm.p50s.push(r.latency.p50);
      arm.p99s.push(r.latency.p99);
      arm.serverP99s.push(r.serverP99);
      answered += r['3xx'];
    }
  }
  await d.drained();
  await Promise.all(arms.map((arm) => stop(arm.child)));
  await stop(w);
  check('alternating rounds', (await d.recordsAtRest()) - before, answered, CONNECTIONS * ROUNDS * arms.length);
  for (const arm of arms) {
    line(arm.label, {
      reqPerSec: median(arm.rates),
      p50: median(arm.p50s),
      p99: median(arm.p99s),
      extra: `(medians of ${ROUNDS}; rates ${arm.rates.map(Math.round).join(' ')}; server-side p99 ${arm.serverP99s.join(', ')})`,
    });
  }
  const reference = median(arms[0]!.rates);
  for (const arm of arms.slice(1)) {
    const perRound = arm.rates.map((r, i) => (r / arms[0]!.rates[i]!).toFixed(2)).join(' ');
    log(
      `${`  -> ${arm.label}`.slice(0, 60).padEnd(60)} ${(median(arm.rates) / reference).toFixed(2)} x (per round: ${perRound}), p99 ${median(arm.p99s)} ms (target >= 0.8 x, <= 5 ms)`,
    );
  }
}

async function main(): Promise<void> {
  const redisPort = await freePort();
  const redisServer = spawn(
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  children.push(redisServer);
  await sleep(300);
  const redis = new Redis({ port: redisPort, host: '127.0.0.1' });
  const databaseUrl = await freshDatabase();
  const storage = createStorage(loadConfig({ DATABASE_URL: databaseUrl, DB_POOL_MAX: '4' }));
  const db = storage.db as unknown as Kysely<unknown>;
  await migrateToLatest(db, storage.dialect);
  codes.push(...(await seedLinksPortable(storage.db, LINKS, Date.now())));
  const cleanUp = async () => {
    await storage.close();
    await redis.quit();
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`drop database ${new URL(databaseUrl).pathname.slice(1)} with (force)`);
    await c.end();
  };
  const records = async () =>
    Number((await sql<{ n: number }>`select count(*)::int as n from clicks`.execute(db)).rows[0]!.n);
  /**
   * The records once the warm-up's queued clicks are written: the count holds still for longer than
   * CLICK_FLUSH_MS (1 s), the longest a queued click waits (a half-second stillness once let up to 610 of
   * them through, written during the measured run).
   */
  const recordsAtRest = async () => {
    for (let last = -1; ;) {
      const n = await records();
      if (n === last) return n;
      last = n;
      await sleep(1_500);
    }
  };
  const base = {
    DATABASE_URL: databaseUrl,
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'ferry-bench-')),
    JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '1000000',
    REDIRECT_RATE_LIMIT_PER_MINUTE: '10000000',
    TOKEN_RATE_LIMIT_PER_MINUTE: '1000000',
    PASSWORD_HASHES_PER_MINUTE: '100000',
    PASSWORD_HASH_COST: '10',
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  };
  const scaled = {
    ...base,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    REDIS_KEY_PREFIX: PREFIX,
    CLICK_QUEUE_LIMIT: '10000000',
  };
  const { stream } = clickStreamKeys(PREFIX);
  const drained = async () => {
    for (;;) {
      const info = await clickGroupInfo(redis, stream);
      const [pending] = (await redis.xpending(stream, CLICK_GROUP)) as [number];
      if (info && info.lag === 0 && pending === 0) return;
      await sleep(100);
    }
  };
  log(
    `${LINKS} links, ${CONNECTIONS} connections, ${DURATION} s per run; everything on this machine (${(await import('node:os')).cpus().length} cores)`,
  );

  if (ROUNDS > 0) {
    await alternatingRounds({ base, scaled, records, recordsAtRest, drained });
    return cleanUp();
  }

  // 1. The reference: PostgreSQL, in-process queue.
  const one = await api(base);
  await redirects(one.url, CONNECTIONS, WARMUP);
  let before = await recordsAtRest();
  const r1 = await measuredRedirects(one.url);
  await stop(one.child);
  check('in-process', (await records()) - before, r1['3xx'], CONNECTIONS);
  line('1 API, PostgreSQL, in-process click queue', {
    reqPerSec: r1.requests.average,
    p50: r1.latency.p50,
    p99: r1.latency.p99,
    extra: `server-side p99 ${r1.serverP99}`,
  });

  // 2. One API instance and a worker, through Redis.
  const w = worker(scaled);
  const two = await api(scaled);
  await redirects(two.url, CONNECTIONS, WARMUP);
  await drained();
  before = await records();
  const r2 = await measuredRedirects(two.url);
  const lagAtEnd = await clickGroupInfo(redis, stream);
  let t = performance.now();
  await drained();
  const drainMs = performance.now() - t;
  check('one instance, redis', (await records()) - before, r2['3xx'], CONNECTIONS);
  line('1 API + 1 worker, PostgreSQL + Redis stream', {
    reqPerSec: r2.requests.average,
    p50: r2.latency.p50,
    p99: r2.latency.p99,
    extra: `server-side p99 ${r2.serverP99}; worker lag at end ${String(lagAtEnd?.lag)}, drained ${Math.round(drainMs)} ms later`,
  });

  // 2a. The same with the writing left to the worker (CLICK_WORKER_IN_PROCESS=false): the API only appends.
  const apiOnly = await api({ ...scaled, CLICK_WORKER_IN_PROCESS: 'false' });
  await redirects(apiOnly.url, CONNECTIONS, WARMUP);
  await drained();
  before = await records();
  const r2a = await measuredRedirects(apiOnly.url);
  await drained();
  check('one instance, redis, worker only', (await records()) - before, r2a['3xx'], CONNECTIONS);
  await stop(apiOnly.child);
  line('1 API (CLICK_WORKER_IN_PROCESS=false) + 1 worker', {
    reqPerSec: r2a.requests.average,
    p50: r2a.latency.p50,
    p99: r2a.latency.p99,
    extra: `server-side p99 ${r2a.serverP99}`,
  });
  // The target: at least 0.8 x the same instance on PostgreSQL alone, p99 at most 5 ms.
  for (const [what, r] of [
    ['consuming too', r2],
    ['worker only', r2a],
  ] as const) {
    log(
      `${`  -> with Redis (${what}) against PostgreSQL alone`.padEnd(60)} ${(r.requests.average / r1.requests.average).toFixed(2)} x, p99 ${r.latency.p99} ms (target >= 0.8 x, <= 5 ms)`,
    );
  }

  if (ONLY_REDIRECTS) {
    await Promise.all([stop(two.child), stop(w)]);
    return cleanUp();
  }

  // 2b. The same instance while no worker runs: it appends and, with CLICK_WORKER_IN_PROCESS (the default), consumes alone.
  await stop(w);
  before = await records();
  const r2b = await redirects(two.url, CONNECTIONS);
  line('1 API consuming alone (no worker), PostgreSQL + Redis stream', {
    reqPerSec: r2b.requests.average,
    p50: r2b.latency.p50,
    p99: r2b.latency.p99,
  });
  const w2 = worker(scaled);
  await drained();
  check('one instance, redis, worker later', (await records()) - before, r2b['3xx'], CONNECTIONS);

  // 3. Two API instances and the worker.
  const three = await api(scaled);
  await redirects(three.url, CONNECTIONS, WARMUP);
  await drained();
  before = await records();
  const [ra, rb] = await Promise.all([redirects(two.url, CONNECTIONS / 2), redirects(three.url, CONNECTIONS / 2)]);
  await drained();
  check('two instances, redis', (await records()) - before, ra['3xx'] + rb['3xx'], CONNECTIONS);
  line('2 API + 1 worker (sum of both)', {
    reqPerSec: ra.requests.average + rb.requests.average,
    p50: Math.max(ra.latency.p50, rb.latency.p50),
    p99: Math.max(ra.latency.p99, rb.latency.p99),
  });
  await Promise.all([stop(two.child), stop(three.child), stop(w2)]);

  // 4. Worker drain rate.
  for (const workers of [1, 2]) {
    const n = 200_000;
    for (let i = 0; i < n; i += 10_000) {
      const p = redis.pipeline();
      for (let j = i; j < i + 10_000; j += 1) {
        p.xadd(
          stream,
          '*',
          CLICK_FIELD,
          encodeClick({
            key: randomUUID(),
            linkId: 1 + (j % LINKS),
            shortCode: 'x',
            clickedAt: Date.now(),
            ip: `10.0.${(j >> 8) & 255}.${j & 255}`,
            userAgent: 'bench',
            referrer: null,
          }),
        );
      }
      await p.exec();
    }
    before = await records();
    t = performance.now();
    const ws = Array.from({ length: workers }, () => worker({ ...scaled, CLICK_BATCH_SIZE: '1000' }));
    await drained();
    const ms = performance.now() - t;
    if ((await records()) - before !== n) throw new Error('drain: records differ');
    log(
      `${`${workers} worker(s) draining ${n} clicks (batches of 1000)`.padEnd(60)} ${String(Math.round(n / (ms / 1000))).padStart(7)} clicks/s (${Math.round(ms)} ms incl. start-up)`,
    );
    await Promise.all(ws.map(stop));
  }

  // 5. Orders by pool size.
  const signUp = await api(scaled);
  await fetch(`${signUp.url}/api/v1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench_orders', email: 'bench@example.com', password: 'long-enough-pw' }),
  });
  await sql`update users set status = 'active' where username = 'bench_orders'`.execute(db);
  const login = await fetch(`${signUp.url}/api/v1/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench_orders', password: 'long-enough-pw' }),
  });
  const { accessToken } = (await login.json()) as { accessToken: string };
  await stop(signUp.child);
  for (const poolMax of [2, 5, 10, 20]) {
    const s = await api({ ...scaled, DB_POOL_MAX: String(poolMax) });
    const r = await autocannon({
      url: s.url,
      connections: 20,
      duration: DURATION,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/orders',
          setupRequest: (req) =>
            ({
              ...req,
              headers: {
                'content-type': 'application/json',
                authorization: `Bearer ${accessToken}`,
                'idempotency-key': randomUUID(),
              },
              body: '{"itemId":1,"quantity":1}',
            }) as typeof req,
        },
      ],
    });
    await stop(s.child);
    line(`orders, 1 API, DB_POOL_MAX=${poolMax}, 20 connections`, {
      reqPerSec: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      extra: `non-2xx ${r.non2xx}`,
    });
  }

  await cleanUp();
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    process.exit();
  });
