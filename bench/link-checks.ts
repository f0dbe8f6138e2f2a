/**
 * tsx bench/link-checks.ts [links=100000] [hosts=1000] [perMinute=120000] [intervalHours=0.25] — SPEC §24's bounds
 * at full size: `links` links to `hosts` host names (all resolved to a loopback server answering in 20 ms), checked
 * by the app's own `link-checks` job (LINK_CHECK_ALLOW_PRIVATE=true, the embedded database in a temporary
 * directory, or DATABASE_URL). Prints how long one round took against the interval, the most checks started in
 * any 60 s against LINK_CHECKS_PER_MINUTE, and the most requests a host had at once (must be 1).
 *
 * REDIRECT_ROUNDS=n: instead of the round, the redirects while checks run. The app listens, and n rounds each
 * measure GET /<code> (bench/load.ts, 10 connections, 10 s, 10,000 of the links) twice: with the checks held
 * (every check's request waits, so none runs) and with them running at `perMinute`. Prints both rows and the
 * ratio of their throughputs (1: the checks take nothing from the redirects).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createStorage } from '../src/db/database.js';
import { createOutboundHttp } from '../src/infra/outbound-http.js';
import type { LoadResult } from './load.js';
import { latencyOf } from './lib/latency.js';
import { runJson } from './lib/proc.js';

const [links, hosts, perMinute, intervalHours] = [100_000, 1_000, 120_000, 0.25].map((d, i) =>
  Number(process.argv[2 + i] ?? d),
) as [number, number, number, number];

const inFlight = new Map<string, number>();
let maxPerHost = 0;
const server = createServer((req, res) => {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  const n = (inFlight.get(host) ?? 0) + 1;
  inFlight.set(host, n);
  maxPerHost = Math.max(maxPerHost, n);
  res.on('close', () => inFlight.set(host, (inFlight.get(host) ?? 1) - 1));
  setTimeout(() => res.writeHead(200).end('ok'), 20);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as AddressInfo).port;

const starts: number[] = [];
const real = createOutboundHttp({ resolve: async () => ['127.0.0.1'] });
/** REDIRECT_ROUNDS: while set, a check's request waits for it to be cleared (the checks held). */
let held: { released: Promise<void>; release: () => void } | null = null;
const hold = () => {
  let release = () => undefined as void;
  const released = new Promise<void>((r) => (release = r));
  held = { released, release };
};
const letGo = () => {
  const was = held;
  held = null;
  was?.release();
};
const outbound = {
  request: async (req: Parameters<typeof real.request>[0]) => {
    while (held) await held.released;
    starts.push(performance.now());
    return real.request(req);
  },
};
const redirectRounds = Number(process.env.REDIRECT_ROUNDS ?? 0);
if (redirectRounds > 0) hold(); // held until the redirects' first measured window

const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-bench-checks-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  LINK_CHECKS: 'true',
  LINK_CHECKS_PER_MINUTE: String(perMinute),
  LINK_CHECK_INTERVAL_HOURS: String(intervalHours),
  LINK_CHECK_ALLOW_PRIVATE: 'true',
  // as bench/scenarios.ts: one load generator's address is not to be limited
  REDIRECT_RATE_LIMIT_PER_MINUTE: '10000000',
  RATE_LIMIT_PER_MINUTE: '1000000',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
const storage = createStorage(config);
const app = await buildApp(config, { storage, linkChecks: { outbound } });
await app.ready();

const now = Date.now();
for (let i = 0; i < links; i += 1_000) {
  const rows = Array.from({ length: Math.min(1_000, links - i) }, (_, j) => ({
    short_code: `b${(i + j).toString(36)}`,
    original_url: `http://h${(i + j) % hosts}.bench:${port}/p/${i + j}`,
    user_id: null,
    created_at: now,
    updated_at: now,
  }));
  // Each code claimed in link_codes as the API does (the redirect resolves a name there).
  const made = await storage.db.insertInto('links').values(rows).returning(['id', 'short_code']).execute();
  await storage.db
    .insertInto('link_codes')
    .values(made.map((l) => ({ code: l.short_code, link_id: l.id, retired_at: null, retired_reason: null })))
    .execute();
}
const intervalMs = intervalHours * 3_600_000;

/** GET /<code> over 10,000 of the links for 10 s (bench/load.ts in a process of its own). */
async function redirects(url: string, codesFile: string): Promise<LoadResult> {
  const spec = { url, connections: 10, duration: 10, workload: 'codes', codesFile };
  return (await runJson<LoadResult>(['--import', 'tsx', 'bench/load.ts', JSON.stringify(spec)], {})).result;
}

if (redirectRounds > 0) {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const codesFile = path.join(dataDir, 'codes.txt');
  writeFileSync(codesFile, Array.from({ length: Math.min(links, 10_000) }, (_, i) => `b${i.toString(36)}`).join('\n'));
  await redirects(url, codesFile); // warm-up: the cache, the JIT
  const rows = { held: [] as LoadResult[], running: [] as LoadResult[] };
  for (let round = 0; round < redirectRounds; round += 1) {
    rows.held.push(await redirects(url, codesFile));
    const checksBefore = starts.length;
    letGo();
    rows.running.push(await redirects(url, codesFile));
    console.error(`round ${round + 1}: ${starts.length - checksBefore} checks while the redirects ran`);
    hold();
  }
  const summary = (rs: LoadResult[]) => {
    const requests = rs.reduce((n, r) => n + r.requests, 0);
    const seconds = rs.reduce((n, r) => n + r.seconds, 0);
    const latency = latencyOf(rs.map((r) => r.histogram));
    const non3xx = rs.reduce(
      (n, r) =>
        n +
        Object.entries(r.statuses)
          .filter(([k]) => k !== '302' && k !== '301')
          .reduce((m, [, v]) => m + v, 0),
      0,
    );
    const statuses = Object.keys(Object.assign({}, ...rs.map((r) => r.statuses)));
    return { reqPerSec: Math.round(requests / seconds), p50Ms: latency.p50, p99Ms: latency.p99, non3xx, statuses };
  };
  const [h, r] = [summary(rows.held), summary(rows.running)];
  console.log(
    JSON.stringify({
      links,
      hosts,
      perMinute,
      rounds: redirectRounds,
      checksHeld: h,
      checksRunning: r,
      checksStarted: starts.length,
      ratio: +(r.reqPerSec / h.reqPerSec).toFixed(3),
    }),
  );
  letGo();
  await app.close();
  await storage.close();
  server.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}

const began = performance.now();
for (;;) {
  const row = await storage.db
    .selectFrom('links')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('health_checked_at', 'is', null)
    .executeTakeFirstOrThrow();
  if (Number(row.n) === 0) break;
  if (performance.now() - began > intervalMs * 1.5) break;
  await new Promise((r) => setTimeout(r, 1_000));
}
const roundMs = performance.now() - began;
const sorted = [...starts].sort((a, b) => a - b);
let most = 0;
for (let i = 0, j = 0; i < sorted.length; i += 1) {
  while (sorted[i]! - sorted[j]! >= 60_000) j += 1;
  most = Math.max(most, i - j + 1);
}
console.log(
  JSON.stringify({
    links,
    hosts,
    perMinute,
    intervalS: intervalMs / 1000,
    roundS: Math.round(roundMs / 100) / 10,
    withinInterval: roundMs <= intervalMs,
    mostIn60s: most,
    maxInFlightPerHost: maxPerHost,
    checks: starts.length,
  }),
);
await app.close();
await storage.close();
server.close();
rmSync(dataDir, { recursive: true, force: true });
