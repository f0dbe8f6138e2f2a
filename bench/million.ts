/**
 * npm run bench:million (tsx bench/million.ts), or `npm run bench -- --only=million`
 *
 * A million-link instance against an empty one (issue 37 item 4): the compiled server (`node dist/src/server.js`,
 * built first) on two databases of the same run: one with a user holding a handful of links made through the API,
 * one where the same user holds 1,000,000 links generated straight into the database (bench/lib/million-seed.ts).
 * Every list, search, statistics and lookup request, link creation and the CSV export's first byte are timed one
 * request at a time (no queueing: each figure is the request's own latency) and printed as p50/p99 on both, with
 * the ratio million / empty. Exits 1 when a request answers other than expected.
 *
 * Env: DATABASE_URL (a PostgreSQL server: two databases ferry_million_<pid>_{empty,full} are created on it and
 * dropped at the end; default: SQLite in temporary DATA_DIRs), MILLION_LINKS (default 1,000,000),
 * MILLION_SAMPLES (requests per row, default 100; 30 cursor pages are walked that many / 30 times, ≥ 3),
 * MILLION_FERRY_ENV (JSON: more variables for both servers, e.g. {"OVERLOAD_MAX_EVENT_LOOP_DELAY_MS":"0"} to time
 * every request of a build whose slow ones make the overload guard shed the rest), MILLION_ONLY (comma-separated
 * parts of row names: only the rows whose name holds one, e.g. `2 characters,every link`).
 * Prints a Markdown table and, last, one JSON line.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ROOT, startServer, stopServer, type Server } from './lib/proc.js';
import { MILLION, seedMillion } from './lib/million-seed.js';
import { ENDPOINTS, requestRows, type Endpoint, type Sample, type Target } from './lib/million-requests.js';

const LINKS = Number(process.env.MILLION_LINKS ?? 1_000_000);
const SAMPLES = Number(process.env.MILLION_SAMPLES ?? 100);
const PG_URL = process.env.DATABASE_URL ?? null;
const ONLY = process.env.MILLION_ONLY?.split(',') ?? null;
const ROWS = ENDPOINTS.filter((e) => ONLY === null || ONLY.some((part) => e.name.includes(part)));
const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };
const log = (line: string) => process.stderr.write(`${line}\n`);

const ENV = {
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
  RATE_LIMIT_PER_MINUTE: '1000000',
  REDIRECT_RATE_LIMIT_PER_MINUTE: '10000000',
  PASSWORD_HASHES_PER_MINUTE: '100000',
  PASSWORD_HASH_COST: '10',
  ADMIN_USERNAME: ADMIN.username,
  ADMIN_PASSWORD: ADMIN.password,
};

interface Instance {
  dataDir: string;
  databaseUrl: string | null;
}

async function call(
  server: Server,
  method: string,
  p: string,
  body: unknown,
  token?: string,
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {
    'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
  };
  if (token) headers.authorization = `Bearer ${token}`;
  let res = await fetch(`${server.url}${p}`, { method, headers, body: JSON.stringify(body) });
  // Setting up: a busy machine's start-up may trip the overload guard for a sample or two.
  for (let retry = 0; res.status === 503 && retry < 20; retry += 1) {
    await new Promise((r) => setTimeout(r, 1000));
    res = await fetch(`${server.url}${p}`, { method, headers, body: JSON.stringify(body) });
  }
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** Measured once the routes' schemas are compiled (the server compiles them in the background after it listens). */
const start = (inst: Instance) =>
  startServer(
    'ferry',
    ['dist/src/server.js'],
    {
      ...ENV,
      ...(JSON.parse(process.env.MILLION_FERRY_ENV ?? '{}') as Record<string, string>),
      DATA_DIR: inst.dataDir,
      ...(inst.databaseUrl ? { DATABASE_URL: inst.databaseUrl } : {}),
    },
    { readyLog: 'schema compilers warmed' },
  );

/** The admin's and the user's tokens, the user (active) created on first use. */
async function tokens(server: Server, create: boolean): Promise<{ admin: string; user: string; userId: number }> {
  const admin = String((await call(server, 'POST', '/api/v1/tokens', ADMIN)).accessToken);
  if (create) {
    const u = await call(server, 'POST', '/api/v1/users', {
      username: 'bench',
      email: 'bench@example.com',
      password: 'bench-password',
    });
    await call(server, 'PATCH', `/api/v1/users/${String(u.id)}`, { status: 'active' }, admin);
  }
  const login = await call(server, 'POST', '/api/v1/tokens', { username: 'bench', password: 'bench-password' });
  const me = await fetch(`${server.url}/api/v1/users/me`, {
    headers: { authorization: `Bearer ${String(login.accessToken)}` },
  });
  return { admin, user: String(login.accessToken), userId: Number(((await me.json()) as { id: number }).id) };
}

/** The empty instance: the user and three links through the API (one to read, one with an alias and tags). */
async function prepareEmpty(inst: Instance): Promise<Target> {
  const server = await start(inst);
  try {
    const t = await tokens(server, true);
    await call(
      server,
      'POST',
      '/api/v1/links',
      { original_url: 'https://example.com/articles/1?utm_source=bench', title: 'Article 1 about topic1' },
      t.user,
    );
    await call(
      server,
      'POST',
      '/api/v1/links',
      { original_url: 'https://example.com/articles/100', aliases: [MILLION.aliasOf(100)], tags: ['common', 'rare'] },
      t.user,
    );
    const link = await call(
      server,
      'POST',
      '/api/v1/links',
      { original_url: 'https://example.com/articles/2', short_code: MILLION.codeOf(LINKS / 2) },
      t.user,
    );
    return { userId: t.userId, code: String(link.short_code) };
  } finally {
    await stopServer(server.child);
  }
}

/** The million instance: the user through the API, then its links straight into the database. */
async function prepareMillion(inst: Instance): Promise<Target> {
  const server = await start(inst);
  let userId: number;
  try {
    userId = (await tokens(server, true)).userId;
  } finally {
    await stopServer(server.child);
  }
  const seconds = await seedMillion(inst, userId, LINKS, Date.now());
  log(`seeded ${LINKS.toLocaleString('en-US')} links in ${seconds.toFixed(1)} s`);
  return { userId, code: MILLION.codeOf(LINKS / 2) };
}

async function measure(inst: Instance, target: Target, endpoints: Endpoint[]): Promise<Map<string, Sample[]>> {
  const server = await start(inst);
  try {
    const t = await tokens(server, false);
    return await requestRows(server.url, { ...target, admin: t.admin, user: t.user }, endpoints, SAMPLES, log);
  } finally {
    await stopServer(server.child);
  }
}

/** A percentile of the samples' times (shed ones included: their time is what the client waited). */
const pct = (xs: Sample[], q: number) =>
  xs.map((x) => x.ms).sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)] ?? NaN;

async function pgDatabases(): Promise<{ urls: [string, string]; drop: () => Promise<void> }> {
  const names = [`ferry_million_${process.pid}_empty`, `ferry_million_${process.pid}_full`];
  const admin = new pg.Client({ connectionString: PG_URL! });
  await admin.connect();
  for (const n of names) await admin.query(`create database ${n}`);
  const urlOf = (n: string) => Object.assign(new URL(PG_URL!), { pathname: `/${n}` }).toString();
  return {
    urls: [urlOf(names[0]!), urlOf(names[1]!)],
    drop: async () => {
      for (const n of names) await admin.query(`drop database if exists ${n} with (force)`);
      await admin.end();
    },
  };
}

async function main(): Promise<void> {
  log('building Ferry (npm run build) ...');
  execSync('npm run build --silent', { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const work = mkdtempSync(path.join(tmpdir(), 'ferry-million-'));
  const dbs = PG_URL ? await pgDatabases() : null;
  try {
    const empty: Instance = { dataDir: path.join(work, 'empty'), databaseUrl: dbs?.urls[0] ?? null };
    const full: Instance = { dataDir: path.join(work, 'full'), databaseUrl: dbs?.urls[1] ?? null };
    const [emptyTarget, fullTarget] = [await prepareEmpty(empty), await prepareMillion(full)];
    const before = await measure(empty, emptyTarget, ROWS);
    const after = await measure(full, fullTarget, ROWS);
    const engine = PG_URL ? 'PostgreSQL' : 'SQLite';
    const rows = ROWS.map((e) => {
      const [a, b] = [before.get(e.name)!, after.get(e.name)!];
      const shed = b.filter((x) => !x.ok).length + a.filter((x) => !x.ok).length;
      return {
        name: e.name,
        emptyP50: pct(a, 0.5),
        emptyP99: pct(a, 0.99),
        p50: pct(b, 0.5),
        p99: pct(b, 0.99),
        ratioP99: pct(b, 0.99) / pct(a, 0.99),
        budgetMs: e.budgetMs,
        shed,
      };
    });
    const f = (n: number) => n.toFixed(1);
    const table = [
      `${engine}, ${LINKS.toLocaleString('en-US')} links of one user against an empty instance, ${SAMPLES} requests a row one at a time (ms)`,
      '',
      '| request | empty p50 | empty p99 | million p50 | million p99 | p99 × empty | budget | shed (503) |',
      '|---|---:|---:|---:|---:|---:|---|---:|',
      ...rows.map(
        (r) =>
          `| ${r.name} | ${f(r.emptyP50)} | ${f(r.emptyP99)} | ${f(r.p50)} | ${f(r.p99)} | ${r.ratioP99.toFixed(1)} | ${r.p99 < r.budgetMs && r.shed === 0 ? 'met' : 'MISSED'} (< ${r.budgetMs}) | ${r.shed} |`,
      ),
    ].join('\n');
    process.stdout.write(`${table}\n${JSON.stringify({ engine, links: LINKS, samples: SAMPLES, rows })}\n`);
  } finally {
    await dbs?.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  log(`million failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
