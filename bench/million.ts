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
import { call, pgDatabases, startInstance, tokens, type Instance } from './lib/instance.js';
import { ROOT, stopServer } from './lib/proc.js';
import { MILLION, seedMillion } from './lib/million-seed.js';
import { ENDPOINTS, requestRows, type Endpoint, type Sample, type Target } from './lib/million-requests.js';

const LINKS = Number(process.env.MILLION_LINKS ?? 1_000_000);
const SAMPLES = Number(process.env.MILLION_SAMPLES ?? 100);
const PG_URL = process.env.DATABASE_URL ?? null;
const ONLY = process.env.MILLION_ONLY?.split(',') ?? null;
const ROWS = ENDPOINTS.filter((e) => ONLY === null || ONLY.some((part) => e.name.includes(part)));
const log = (line: string) => process.stderr.write(`${line}\n`);

const start = (inst: Instance) =>
  startInstance(inst, JSON.parse(process.env.MILLION_FERRY_ENV ?? '{}') as Record<string, string>);

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

async function main(): Promise<void> {
  log('building Ferry (npm run build) ...');
  execSync('npm run build --silent', { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const work = mkdtempSync(path.join(tmpdir(), 'ferry-million-'));
  const dbs = PG_URL
    ? await pgDatabases(PG_URL, [`ferry_million_${process.pid}_empty`, `ferry_million_${process.pid}_full`])
    : null;
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
