/**
 * npm run bench:scale (tsx bench/scale.ts): Ferry at ten million links (issue 37 item 6).
 *
 * Builds one instance with the compiled server (`node dist/src/server.js`, built first): the admin and one user
 * through the API, then SCALE_LINKS links of that user (default 10,000,000) and SCALE_CLICKS click records over
 * the last year (default 100,000,000 on SQLite, 20,000,000 on PostgreSQL) generated straight into the database
 * with their rollups and counters (bench/lib/scale-seed.ts says how; a test checks them against Ferry's own click
 * writer), and then measures, on the running server (overload guard off, so that a slow request is timed rather
 * than shed):
 *
 * - redirects of random codes of every link (a browser's User-Agent, 10 connections): most visits miss the link
 *   cache; every visit the server answered (its metrics) must become one more click record (checked after it stops);
 * - every list, search, statistics and lookup request of bench:million, one at a time (the link statistics are
 *   those of the link with a tenth of the clicks, the user statistics those of the user with every link), link
 *   creation, the CSV export's first byte and its whole rate;
 * - backup and restore (SQLite: `ferry backup` while the server runs, then `ferry restore` into an empty
 *   DATA_DIR; PostgreSQL: `pg_dump --format=custom` and `pg_restore` into a new database), and the size on disk.
 *
 * Env: DATABASE_URL (a PostgreSQL server: a database ferry_scale_<pid> is created on it and dropped at the end;
 * default: SQLite in a temporary DATA_DIR under SCALE_DIR or the system's), SCALE_LINKS, SCALE_CLICKS,
 * SCALE_SAMPLES (requests per row, default 20), SCALE_REDIRECT_SECONDS (default 30), SCALE_BACKUP=0 (skip backup
 * and restore). SQLite needs about 300 bytes of disk a click record for the database, and as much again while the
 * backup runs (with less free space the backup is left out and the table says so). Prints a Markdown table and,
 * last, one JSON line; exits 1 when a request answers other than expected or a visit was not recorded once.
 */
import { execFileSync, execSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { SqliteDatabase } from '../src/db/sqlite-driver.js';
import { createStorage } from '../src/db/database.js';
import type { LoadResult } from './load.js';
import { abandonedCount, redirectCount } from './lib/drive.js';
import { pgDatabases, startInstance, tokens, type Instance } from './lib/instance.js';
import { MILLION } from './lib/million-seed.js';
import { ENDPOINTS, requestRows, type Sample } from './lib/million-requests.js';
import { cpuProbeMs, ROOT, runJson, stopServer, type Server } from './lib/proc.js';
import {
  hotCode,
  openSeeding,
  seedScaleClicks,
  seedScaleLinks,
  seedTargetOf,
  type SeedTarget,
} from './lib/scale-seed.js';

const PG_URL = process.env.DATABASE_URL ?? null;
const LINKS = Number(process.env.SCALE_LINKS ?? 10_000_000);
const CLICKS = Number(process.env.SCALE_CLICKS ?? (PG_URL ? 20_000_000 : 100_000_000));
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 20);
const REDIRECT_SECONDS = Number(process.env.SCALE_REDIRECT_SECONDS ?? 30);
const BACKUP = process.env.SCALE_BACKUP !== '0';
const DAYS = 365;
const BROWSER_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const seconds = (since: number) => (performance.now() - since) / 1000;

interface Row {
  name: string;
  value: string;
  p50?: number;
  p99?: number;
  budget?: string;
}

const pct = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)] ?? NaN;

/** The links and clicks, straight into the database (the server stopped); the seconds each took. */
async function build(inst: Instance, userId: number): Promise<{ links: number; clicks: number; sync: number }> {
  const now = Date.now();
  let target: SeedTarget & { close(): Promise<void> };
  if (inst.databaseUrl) {
    const storage = createStorage({ databaseUrl: inst.databaseUrl, dataDir: inst.dataDir, dbPoolMax: 1 });
    target = { ...seedTargetOf(storage), close: () => storage.close() };
  } else target = openSeeding(inst.dataDir);
  let times: { links: number; clicks: number };
  try {
    let started = performance.now();
    await seedScaleLinks(target, userId, LINKS, now);
    const links = seconds(started);
    log(`${LINKS.toLocaleString('en-US')} links in ${links.toFixed(0)} s`);
    started = performance.now();
    let reported = 0;
    await seedScaleClicks(target, { userId, links: LINKS, clicks: CLICKS, days: DAYS, now }, (done) => {
      if (done - reported < CLICKS / 20) return;
      reported = done;
      log(`  ${done.toLocaleString('en-US')} clicks, ${seconds(started).toFixed(0)} s`);
    });
    const clicks = seconds(started);
    log(`${CLICKS.toLocaleString('en-US')} clicks in ${clicks.toFixed(0)} s`);
    // What autovacuum does soon after such an insert; SQLite has no statistics unless told (Ferry never runs ANALYZE).
    // Then a checkpoint writes them into the data files, for the sync below to take to the disk.
    if (inst.databaseUrl) {
      await sql`analyze`.execute(target.db);
      await sql`checkpoint`.execute(target.db);
    }
    times = { links, clicks };
  } finally {
    await target.close();
  }
  // The seed's tens of gigabytes reach the disk before anything is measured, not during the redirects that
  // follow: the seed writes without syncs, and the kernel's write-back of its last gigabytes may go on into
  // them (two SQLite runs without this step: 3,934 redirects/s with a p99 of 14 ms, and 1,131/s and 92 ms).
  const syncing = performance.now();
  execFileSync('sync');
  const sync = seconds(syncing);
  log(`written to the disk in ${sync.toFixed(0)} s`);
  return { ...times, sync };
}

/** The database's size: the SQLite files, or PostgreSQL's pg_database_size. */
async function sizeOnDisk(inst: Instance): Promise<number> {
  if (!inst.databaseUrl) {
    const file = path.join(inst.dataDir, 'ferry.db');
    return ['', '-wal'].reduce((sum, ext) => sum + (statSync(file + ext, { throwIfNoEntry: false })?.size ?? 0), 0);
  }
  const client = new pg.Client({ connectionString: inst.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('select pg_database_size(current_database()) as n');
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

/** The highest click record id (SQLite, the server stopped; PostgreSQL, any time). */
async function clickRecords(inst: Instance, after = 0): Promise<{ maxId: number; newer: number }> {
  if (!inst.databaseUrl) {
    const db = new SqliteDatabase(path.join(inst.dataDir, 'ferry.db'), { readonly: true });
    try {
      const r = db
        .prepare('select max(id) as m, (select count(*) from clicks where id > ?) as n from clicks')
        .get(after) as {
        m: number;
        n: number;
      };
      return { maxId: r.m, newer: r.n };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: inst.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ m: string; n: string }>(
      'select (select max(id) from clicks) as m, (select count(*) from clicks where id > $1) as n',
      [after],
    );
    return { maxId: Number(rows[0]!.m), newer: Number(rows[0]!.n) };
  } finally {
    await client.end();
  }
}

/** Random codes of every link, a file of a million lines for bench/load.ts. */
function codesFile(dir: string): string {
  const file = path.join(dir, 'codes.txt');
  const lines: string[] = [];
  for (let k = 0; k < 1_000_000; k += 1) lines.push(MILLION.codeOf(1 + Math.floor(Math.random() * LINKS)));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** A warm-up of 5 s, then the measured run. */
async function redirects(server: Server, codes: string): Promise<LoadResult> {
  const spec = { workload: 'codes', codesFile: codes, headers: { 'user-agent': BROWSER_UA }, connections: 10 };
  const run = async (duration: number) =>
    (
      await runJson<LoadResult>(
        ['--import', 'tsx', 'bench/load.ts', JSON.stringify({ ...spec, url: server.url, duration })],
        {},
      )
    ).result;
  await run(5);
  return run(REDIRECT_SECONDS);
}

/** The whole CSV export of the user's links: rows a second. */
async function exportRate(server: Server, userId: number, token: string): Promise<{ rows: number; seconds: number }> {
  const started = performance.now();
  const res = await fetch(`${server.url}/api/v1/users/${userId}/links`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/csv' },
  });
  if (res.status !== 200) throw new Error(`CSV export: ${res.status}`);
  let rows = 0;
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) for (const c of decoder.decode(chunk as Uint8Array)) if (c === '\n') rows += 1;
  return { rows: rows - 1, seconds: seconds(started) };
}

async function timed(cmd: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${code}`);
  return seconds(started);
}

/** A backup while the server runs: seconds, and the file's bytes. */
async function backup(inst: Instance, work: string): Promise<{ seconds: number; bytes: number }> {
  if (!inst.databaseUrl) {
    const file = path.join(work, 'backup.tar.gz');
    const seconds = await timed(process.execPath, ['bin/ferry.mjs', 'backup', file], { DATA_DIR: inst.dataDir });
    return { seconds, bytes: statSync(file).size };
  }
  const file = path.join(work, 'scale.dump');
  const seconds = await timed('pg_dump', ['--format=custom', `--file=${file}`, inst.databaseUrl]);
  return { seconds, bytes: statSync(file).size };
}

/** The backup restored into an empty DATA_DIR or a new database (deleted after): seconds. */
async function restore(inst: Instance, work: string): Promise<number> {
  if (!inst.databaseUrl) {
    const dir = path.join(work, 'restored');
    try {
      return await timed(process.execPath, ['bin/ferry.mjs', 'restore', path.join(work, 'backup.tar.gz')], {
        DATA_DIR: dir,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const dbs = await pgDatabases(PG_URL!, [`ferry_scale_${process.pid}_restored`]);
  try {
    return await timed('pg_restore', ['--no-owner', `--dbname=${dbs.urls[0]!}`, path.join(work, 'scale.dump')]);
  } finally {
    await dbs.drop();
  }
}

async function main(): Promise<void> {
  log('building Ferry (npm run build) ...');
  execSync('npm run build --silent', { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const probe = Math.round(cpuProbeMs());
  const parent = process.env.SCALE_DIR ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  const work = mkdtempSync(path.join(parent, 'ferry-scale-'));
  const dbs = PG_URL ? await pgDatabases(PG_URL, [`ferry_scale_${process.pid}`]) : null;
  const engine = PG_URL ? 'PostgreSQL' : 'SQLite';
  const rows: Row[] = [];
  let failed = false;
  try {
    const inst: Instance = { dataDir: path.join(work, 'data'), databaseUrl: dbs?.urls[0] ?? null };
    let server = await startInstance(inst);
    const { userId } = await tokens(server, true);
    await stopServer(server.child);
    const started = performance.now();
    const built = await build(inst, userId);
    rows.push({
      name: `build: ${LINKS.toLocaleString('en-US')} links, ${CLICKS.toLocaleString('en-US')} click records`,
      value:
        `${(seconds(started) / 60).toFixed(1)} min (links ${built.links.toFixed(0)} s, ` +
        `clicks ${built.clicks.toFixed(0)} s: ${Math.round(CLICKS / built.clicks).toLocaleString('en-US')}/s, ` +
        `sync ${built.sync.toFixed(0)} s)`,
    });

    server = await startInstance(inst, { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' });
    let running = true;
    rows.push({ name: 'database size on disk', value: `${((await sizeOnDisk(inst)) / 2 ** 30).toFixed(1)} GiB` });
    const before = await clickRecords(inst, Number.MAX_SAFE_INTEGER);
    const t = await tokens(server, false);
    log('redirects ...');
    const r = await redirects(server, codesFile(work));
    // The server's own counts: the load generator does not see the answers in flight when it stops.
    const answered = (await redirectCount(server)) ?? NaN;
    const abandoned = await abandonedCount(server);
    rows.push({
      name: `redirect, random codes of ${LINKS.toLocaleString('en-US')} links, browser User-Agent, 10 connections`,
      value: `${Math.round(r.reqPerSec).toLocaleString('en-US')}/s`,
      p50: r.latencyMs.p50,
      p99: r.latencyMs.p99,
    });
    log('requests one at a time ...');
    const samples = await requestRows(
      server.url,
      { userId, code: hotCode(LINKS), admin: t.admin, user: t.user },
      ENDPOINTS,
      SAMPLES,
      log,
    );
    for (const e of ENDPOINTS) {
      const xs = samples.get(e.name)!;
      const ms = xs.map((x: Sample) => x.ms);
      const shed = xs.filter((x) => !x.ok).length;
      rows.push({
        name: e.name,
        value: '',
        p50: pct(ms, 0.5),
        p99: pct(ms, 0.99),
        budget: `${pct(ms, 0.99) < e.budgetMs && shed === 0 ? 'met' : 'missed'} (< ${e.budgetMs})`,
      });
    }
    log('CSV export ...');
    const csv = await exportRate(server, userId, t.user);
    rows.push({
      name: `CSV export, every link (${csv.rows.toLocaleString('en-US')} rows)`,
      value: `${Math.round(csv.rows / csv.seconds).toLocaleString('en-US')} rows/s (${csv.seconds.toFixed(0)} s)`,
    });
    if (BACKUP) {
      const free = statfsSync(work);
      // The backup's staging copy of the database and its archive (a fifth of it), then the restored copy.
      const need = 1.3 * (await sizeOnDisk(inst));
      if (!inst.databaseUrl && free.bavail * free.bsize < need) {
        rows.push({ name: 'backup and restore', value: `not measured: needs ${(need / 2 ** 30).toFixed(0)} GiB free` });
      } else {
        log('backup ...');
        const b = await backup(inst, work);
        rows.push({
          name: PG_URL
            ? 'backup: pg_dump --format=custom, the API running'
            : 'backup: ferry backup, the server running',
          value: `${b.seconds.toFixed(0)} s, ${(b.bytes / 2 ** 30).toFixed(1)} GiB`,
        });
        await stopServer(server.child);
        running = false;
        log('restore ...');
        const seconds = await restore(inst, work);
        rows.push({
          name: PG_URL ? 'restore: pg_restore into a new database' : 'restore: ferry restore into an empty DATA_DIR',
          value: `${seconds.toFixed(0)} s`,
        });
      }
    }
    if (running) await stopServer(server.child);
    const after = await clickRecords(inst, before.maxId);
    // Each answered visit one record; a visit abandoned before its answer may have been recorded first.
    const ok = after.newer >= answered && after.newer <= answered + abandoned;
    if (!ok) failed = true;
    rows.push({
      name: 'redirect: click records written',
      value:
        `${after.newer.toLocaleString('en-US')} for ${answered.toLocaleString('en-US')} visits answered` +
        `${abandoned ? ` and ${abandoned} abandoned` : ''}, warm-up included (${ok ? 'one for each' : 'NOT ONE FOR EACH'})`,
    });
  } finally {
    await dbs?.drop();
    rmSync(work, { recursive: true, force: true });
  }
  const f = (n: number | undefined) => (n === undefined ? '' : n.toFixed(1));
  const table = [
    `${engine}, ${LINKS.toLocaleString('en-US')} links of one user, ${CLICKS.toLocaleString('en-US')} click records ` +
      `over ${DAYS} days; CPU probe ${probe} ms; ${SAMPLES} requests a row, one at a time`,
    '',
    '| measure | figure | p50 ms | p99 ms | budget |',
    '|---|---|---:|---:|---|',
    ...rows.map((r) => `| ${r.name} | ${r.value} | ${f(r.p50)} | ${f(r.p99)} | ${r.budget ?? ''} |`),
  ].join('\n');
  process.stdout.write(`${table}\n${JSON.stringify({ engine, links: LINKS, clicks: CLICKS, probeMs: probe, rows })}\n`);
  if (failed) process.exit(1);
}

main().catch((err: unknown) => {
  log(`scale failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
