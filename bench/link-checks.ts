/**
 * tsx bench/link-checks.ts [links=100000] [hosts=1000] [perMinute=120000] [intervalHours=0.25] — SPEC §24's bounds
 * at full size: `links` links to `hosts` host names (all resolved to a loopback server answering in 20 ms), checked
 * by the app's own `link-checks` job (LINK_CHECK_ALLOW_PRIVATE=true, the embedded database in a temporary
 * directory, or DATABASE_URL). Prints how long one round took against the interval, the most checks started in
 * any 60 s against LINK_CHECKS_PER_MINUTE, and the most requests a host had at once (must be 1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createStorage } from '../src/db/database.js';
import { createOutboundHttp } from '../src/infra/outbound-http.js';

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
const outbound = {
  request: (req: Parameters<typeof real.request>[0]) => (starts.push(performance.now()), real.request(req)),
};

const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-bench-checks-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  LINK_CHECKS: 'true',
  LINK_CHECKS_PER_MINUTE: String(perMinute),
  LINK_CHECK_INTERVAL_HOURS: String(intervalHours),
  LINK_CHECK_ALLOW_PRIVATE: 'true',
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
  await storage.db.insertInto('links').values(rows).execute();
}
const began = performance.now();
const intervalMs = intervalHours * 3_600_000;
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
