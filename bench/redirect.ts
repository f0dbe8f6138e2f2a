/**
 * npm run bench:redirect — Ferry's redirect against a bare Fastify 302 measured in the same run.
 *
 * 1. builds Ferry (npm run build) and seeds 100,000 links into a fresh embedded database;
 * 2. starts the real server (node dist/src/server.js, LOG_LEVEL=info as in production) and a bare Fastify
 *    302-from-a-Map server (bench/baseline-server.ts) in child processes, on free ports;
 * 3. drives each in turn with autocannon from this process, so the two servers never compete for the CPU:
 *    first a "cold" pass that visits every code once (for Ferry each is a cache miss answered by SQLite),
 *    then the measured "warm" run: 10 connections, 10 s, a random code of the 100,000 per request;
 * 4. prints requests/s, p50/p99 latency, the server's CPU time per request and the ratios, then stops Ferry
 *    with SIGTERM and checks that every redirect it answered became a click record.
 *
 * Environment: BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (default 10), BENCH_LINKS (100000),
 * BENCH_FERRY_ENV (JSON object of extra variables for Ferry, e.g. '{"CLICK_FLUSH_MS":"60000"}' to take click
 * writing out of the measured window when looking for where time goes), BENCH_FERRY_NODE_ARGS (e.g.
 * "--cpu-prof --cpu-prof-dir=bench/results" to profile Ferry).
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon, { type Result } from 'autocannon';
import { createStorage } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import type { Kysely } from 'kysely';
import { generateCode } from '../src/modules/links/short-code.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const LINKS = Number(process.env.BENCH_LINKS ?? 100_000);
const log = (line: string) => process.stdout.write(`${line}\n`);

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

async function seed(dataDir: string): Promise<Array<[string, string]>> {
  const storage = createStorage({ databaseUrl: null, dataDir, dbPoolMax: 1 });
  await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  const codes = new Set<string>();
  while (codes.size < LINKS) codes.add(generateCode());
  const links = [...codes].map((code, i): [string, string] => [code, `https://example.com/articles/${i}?utm_source=bench`]);
  const now = Date.now();
  await storage.db.transaction().execute(async (tx) => {
    for (let i = 0; i < links.length; i += 500) {
      const part = links.slice(i, i + 500);
      await tx.insertInto('link_codes').values(part.map(([code]) => ({ code, retired_at: null, retired_reason: null }))).execute();
      await tx.insertInto('links').values(part.map(([code, url]) => ({ short_code: code, original_url: url, user_id: null, expires_at: null, created_at: now }))).execute();
    }
  });
  await storage.close();
  return links;
}

async function start(name: string, args: string[], env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not start`);
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = await exited;
  return code as number | null;
}

/** CPU seconds (user + system) a process has used, from /proc (Linux); null elsewhere. */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/** Drives a server and also reports the server's CPU time per request (less noisy than req/s on a shared machine). */
async function measure(child: ChildProcess, port: number, codes: string[], duration: number | 'each'): Promise<Measured> {
  const before = cpuSeconds(child.pid);
  const started = performance.now();
  const result = await drive(port, codes, duration);
  const seconds = (performance.now() - started) / 1000;
  const after = cpuSeconds(child.pid);
  const total = result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  // Answers over measured wall time (autocannon's own averages count whole seconds only).
  return { ...result, reqPerSec: total / seconds, cpuUsPerRequest: before === null || after === null || total === 0 ? null : ((after - before) * 1e6) / total };
}

type Measured = Result & { reqPerSec: number; cpuUsPerRequest: number | null };

/** `duration` seconds of random codes, or (duration 'each') every code once, in a shuffled order. */
async function drive(port: number, codes: string[], duration: number | 'each'): Promise<Result> {
  let next = 0;
  const pick = duration === 'each' ? () => codes[next++ % codes.length] : () => codes[Math.floor(Math.random() * codes.length)];
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    ...(duration === 'each' ? { amount: codes.length } : { duration }),
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/${pick()}` }) }],
  });
}

const summary = (r: Measured) => ({
  cpuUs: r.cpuUsPerRequest === null ? null : Math.round(r.cpuUsPerRequest),
  reqPerSec: Math.round(r.reqPerSec),
  p50: r.latency.p50,
  p99: r.latency.p99,
  max: r.latency.max,
  redirects: r['3xx'],
  other: r['2xx'] + r['4xx'] + r['5xx'] + r.errors + r.timeouts,
});

async function main(): Promise<void> {
  log('building Ferry (npm run build) ...');
  execSync('npm run build --silent', { cwd: ROOT, stdio: 'inherit' });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-bench-'));
  const started = performance.now();
  const links = await seed(dataDir);
  log(`seeded ${links.length} links in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const codes = links.map(([code]) => code).sort(() => Math.random() - 0.5);
  const codesFile = path.join(dataDir, 'codes.json');
  writeFileSync(codesFile, JSON.stringify(links));

  const basePort = await freePort();
  const baseline = await start('baseline', ['--import', 'tsx', 'bench/baseline-server.ts'], { CODES_FILE: codesFile }, basePort);
  const ferryPort = await freePort();
  const nodeArgs = (process.env.BENCH_FERRY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const ferry = await start('ferry', [...nodeArgs, 'dist/src/server.js'], {
    DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'info', JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
    ...(JSON.parse(process.env.BENCH_FERRY_ENV ?? '{}') as Record<string, string>),
  }, ferryPort);

  try {
    log(`driving each server: ${CONNECTIONS} connections; cold pass over all ${codes.length} codes, then ${DURATION} s of random codes`);
    const baseCold = summary(await measure(baseline, basePort, codes, 'each'));
    const base = summary(await measure(baseline, basePort, codes, DURATION));
    const ferCold = summary(await measure(ferry, ferryPort, codes, 'each'));
    const fer = summary(await measure(ferry, ferryPort, codes, DURATION));
    await stop(baseline);
    const exit = await stop(ferry);

    // Every GET Ferry answered with a redirect (warm-up included) must be a click record after SIGTERM.
    const storage = createStorage({ databaseUrl: null, dataDir, dbPoolMax: 1 });
    const clicks = Number((await storage.db.selectFrom('clicks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const counted = Number((await storage.db.selectFrom('links').select((eb) => eb.fn.sum<number>('click_count').as('n')).executeTakeFirstOrThrow()).n);
    await storage.close();

    const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a (baseline 0 ms at 1 ms resolution)');
    const row = (name: string, s: ReturnType<typeof summary>) =>
      `${name.padEnd(26)} ${String(s.reqPerSec).padStart(8)} ${s.p50.toFixed(2).padStart(8)} ${s.p99.toFixed(2).padStart(8)} ${s.max.toFixed(2).padStart(8)} ${String(s.cpuUs ?? 'n/a').padStart(11)} ${String(s.other).padStart(7)}`;
    log('');
    log(`${'server'.padEnd(26)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'CPU µs/req'.padStart(11)} ${'non-3xx'.padStart(7)}`);
    log(row('cold: bare Fastify 302', baseCold));
    log(row('cold: Ferry GET /{code}', ferCold));
    log(row('warm: bare Fastify 302', base));
    log(row('warm: Ferry GET /{code}', fer));
    log('');
    log(`cold ratio: throughput ${ratio(ferCold.reqPerSec, baseCold.reqPerSec)}, p99 ${ratio(ferCold.p99, baseCold.p99)}`);
    log(`warm ratio: throughput ${ratio(fer.reqPerSec, base.reqPerSec)}, p50 ${ratio(fer.p50, base.p50)}, p99 ${ratio(fer.p99, base.p99)}, CPU per request ${fer.cpuUs !== null && base.cpuUs ? ratio(fer.cpuUs, base.cpuUs) : 'n/a'}`);
    log(`Ferry exited with ${exit} after SIGTERM; click records ${clicks}, sum of click_count ${counted} (every redirect answered, both passes)`);
    const results = { date: new Date().toISOString(), connections: CONNECTIONS, duration: DURATION, links: LINKS, baseCold, ferCold, baseline: base, ferry: fer, clicks, counted };
    mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
    writeFileSync(path.join(ROOT, 'bench/results', `redirect-${Date.now()}.json`), JSON.stringify(results, null, 2));
  } finally {
    for (const child of [baseline, ferry]) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
