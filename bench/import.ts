/**
 * `ferry import` at scale (SPEC §20), beside the link-creation row of the same run:
 *
 *   npm run build && node --import tsx bench/import.ts
 *
 * 1. link-create: POST /api/v1/links (anonymous, generated code) on the compiled server, 10 connections, for
 *    DURATION seconds after a warm-up: the rate at which the API makes links, the row the imports compare to.
 * 2. import-yourls: `ferry import yourls` (the compiled CLI, a fresh DATA_DIR) from a YOURLS database on the
 *    local MariaDB with LINKS links and VISITS log rows (bench/lib/import-sources.ts).
 * 2b. import-yourls-again: the same import run again (on the same Ferry) after NEW_VISITS more log rows: what
 *    importing again just before the switch costs (docs/migrating.md); its note gives it in % of the first run.
 * 3. import-csv: `ferry import csv --file` of a generic CSV file of LINKS links.
 * 4. sqlite-floor (after import-yourls): every row the YOURLS import wrote, copied by SQLite alone into an empty
 *    database of the same schema (one INSERT … SELECT … WHERE true a table, one transaction, WAL and foreign keys
 *    as Ferry runs them): no JavaScript, no parsing, no binding — the least time the embedded engine takes to
 *    store that import, with its rates in the same columns.
 *
 * An import's rates are over the job's own time (import_jobs.created_at → finished_at: reading the source,
 * writing the links, their visits and rollups); the process's wall time (start-up and migrations included)
 * and its peak resident memory (VmHWM) and CPU time (user + system), read every 20 ms until it exits, are
 * printed beside them: on a machine shared with other work, links and visits per CPU second say what the
 * import itself costs.
 *
 * Env: LINKS (100000), VISITS (1000000), NEW_VISITS (10000), DURATION (10 s), WARMUP (5 s), CONNECTIONS (10), MYSQL_URL (default:
 * root over the local socket), ONLY (comma-separated row names), TARGET_DATABASE_URL (import into PostgreSQL
 * instead of a fresh SQLite file: an empty database), CLI_FROM_SOURCE=1, PROF_DIR (each import's CPU profiles, in
 * PROF_DIR/<row name>/, one file a thread). Prints a table and one JSON line.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SqliteDatabase as Database } from '../src/db/sqlite-driver.js';
import { load } from './lib/drive.js';
import { createYourlsDatabase, writeGenericCsv } from './lib/import-sources.js';
import { cpuSeconds, peakRssBytes, ROOT, SERVER_ARGS, startServer, stopServer } from './lib/proc.js';

const LINKS = Number(process.env.LINKS ?? 100_000);
const VISITS = Number(process.env.VISITS ?? 1_000_000);
const NEW_VISITS = Number(process.env.NEW_VISITS ?? 10_000);
const DURATION = Number(process.env.DURATION ?? 10);
const WARMUP = Number(process.env.WARMUP ?? 5);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@localhost/?socketPath=/run/mysqld/mysqld.sock';
const ONLY = process.env.ONLY?.split(',');
const TARGET = process.env.TARGET_DATABASE_URL;
/** each import's CPU profiles (node --cpu-prof: one file a thread, the main thread's first) in PROF_DIR/<row name>/ */
const PROF_DIR = process.env.PROF_DIR;
const JWT_SECRET = 'bench-secret-that-is-at-least-32-bytes-long';
const ADMIN = { ADMIN_USERNAME: 'bench-admin', ADMIN_PASSWORD: 'bench-admin-password' };
/** The compiled CLI; CLI_FROM_SOURCE=1 runs the sources through tsx (while working on the importer). */
const CLI = process.env.CLI_FROM_SOURCE === '1' ? ['--import', 'tsx', 'src/cli/ferry.ts'] : ['dist/src/cli/ferry.js'];

const log = (line: string) => process.stderr.write(`${line}\n`);

interface BenchRow {
  name: string;
  setup: string;
  links: number;
  visits: number;
  seconds: number;
  wallSeconds: number;
  /** the process's CPU (user + system, all threads) up to its last 20 ms: on a shared machine, what the work itself cost */
  cpuSeconds: number | null;
  peakRssBytes: number | null;
  notes: string;
}

async function linkCreateRow(work: string): Promise<BenchRow> {
  const dataDir = path.join(work, 'link-create');
  mkdirSync(dataDir);
  const server = await startServer('link-create', [...SERVER_ARGS], {
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    JWT_SECRET,
    RATE_LIMIT_PER_MINUTE: '1000000',
    DATA_DIR: dataDir,
    ...ADMIN,
  });
  const ctx = { connections: CONNECTIONS, warmup: WARMUP, duration: DURATION, rounds: 1 };
  try {
    await load(ctx, server, { workload: 'create-link' }, WARMUP);
    const result = await load(ctx, server, { workload: 'create-link' }, DURATION);
    const created = result.statuses['201'] ?? 0;
    return {
      name: 'link-create',
      setup: `POST /api/v1/links, anonymous, generated code, ${CONNECTIONS} connections`,
      links: created,
      visits: 0,
      seconds: result.seconds,
      wallSeconds: result.seconds,
      cpuSeconds: null,
      peakRssBytes: peakRssBytes(server.child.pid),
      notes: `${result.errors} errors`,
    };
  } finally {
    await stopServer(server.child);
  }
}

/** Runs the compiled `ferry import …` on a fresh target (or, with `again`, on `again`'s) and measures it. */
async function importRow(work: string, name: string, setup: string, args: string[], again?: string): Promise<BenchRow> {
  const dataDir = path.join(work, again ?? name);
  const env = {
    PATH: process.env.PATH,
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: 'warn',
    ...ADMIN,
    ...(TARGET ? { DATABASE_URL: TARGET } : {}),
  };
  if (again === undefined) {
    mkdirSync(dataDir);
    const admin = spawn(process.execPath, [...CLI, 'admin', 'create', ADMIN.ADMIN_USERNAME], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    admin.stdin.end(`${ADMIN.ADMIN_PASSWORD}\n`);
    await once(admin, 'exit');
  }
  const started = performance.now();
  const profile = PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', path.join(PROF_DIR, name)] : [];
  const child = spawn(process.execPath, [...profile, ...CLI, 'import', ...args, '--json'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  let peak: number | null = null;
  let cpu: number | null = null;
  const poll = setInterval(() => {
    peak = peakRssBytes(child.pid) ?? peak;
    cpu = cpuSeconds(child.pid) ?? cpu;
  }, 20);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(poll);
  const wallSeconds = (performance.now() - started) / 1000;
  // Exit 1 with the job done: some items failed (the generated keywords include reserved words), the rest came in.
  const result = (code === 0 || code === 1 ? JSON.parse(out) : null) as {
    job: number;
    created: number;
    failed: number;
    visits: number;
    state: string;
  } | null;
  if (result === null || result.state !== 'done')
    throw new Error(`ferry import ${args.join(' ')}: exit ${code}\n${out}`);
  const seconds = TARGET ? wallSeconds : jobSeconds(path.join(dataDir, 'ferry.db'), result.job);
  return {
    name,
    setup,
    links: result.created,
    visits: result.visits,
    seconds,
    wallSeconds,
    cpuSeconds: cpu,
    peakRssBytes: peak,
    notes: `${result.state}; ${result.created} created, ${result.failed} failed${TARGET ? '; PostgreSQL target, rates over wall time' : ''}`,
  };
}

/**
 * The embedded engine's own floor for an import's rows: `source`'s schema made in an empty file, then each table's
 * rows copied into it in one transaction, timed from BEGIN to the end of COMMIT.
 */
function floorRow(source: string, work: string, of: BenchRow): BenchRow {
  const file = path.join(work, 'floor.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`attach '${source.replaceAll("'", "''")}' as src`);
  const schema = db
    .prepare(
      "select type, name, sql from src.sqlite_master where sql is not null and name not like 'sqlite_%' order by type = 'index', rowid",
    )
    .all() as Array<{ type: string; name: string; sql: string }>;
  // A virtual table (the search index) makes its own shadow tables, and its trigger on links fills it as they are
  // copied, as the import's inserts did: only plain tables are copied.
  const shadows = new Set(
    (db.prepare('pragma src.table_list').all() as Array<{ name: string; type: string }>)
      .filter((t) => t.type === 'shadow')
      .map((t) => t.name),
  );
  for (const s of schema) if (!shadows.has(s.name)) db.exec(s.sql);
  const tables = schema
    .filter((s) => s.type === 'table' && !shadows.has(s.name) && !/^create virtual/i.test(s.sql))
    .map((s) => s.name);
  const started = performance.now();
  db.exec('begin');
  // Ferry's foreign keys, checked at the commit: a table made by an earlier migration refers to later ones.
  db.pragma('defer_foreign_keys = on');
  let rows = 0;
  // `where true`: each row through SQLite's insert path (encoded, placed in its B-trees and indexes, its keys and
  // foreign keys checked), not the transfer optimization's copy of stored records. `or ignore`: a row the
  // triggers already made from the rows copied before (the owners' link totals) is not made twice.
  for (const t of tables)
    rows += db.prepare(`insert or ignore into main."${t}" select * from src."${t}" where true`).run().changes;
  db.exec('commit');
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return {
    name: 'sqlite-floor',
    setup: `${fmt(rows)} rows of import-yourls (links, codes, click records, rollups, the job's own) copied by SQLite: INSERT … SELECT, one transaction`,
    links: of.links,
    visits: of.visits,
    seconds,
    wallSeconds: seconds,
    cpuSeconds: null,
    peakRssBytes: null,
    notes: `${tables.length} tables`,
  };
}

function jobSeconds(file: string, job: number): number {
  const db = new Database(file, { readonly: true });
  const row = db.prepare('select created_at, finished_at from import_jobs where id = ?').get(job) as {
    created_at: number;
    finished_at: number;
  };
  db.close();
  return (row.finished_at - row.created_at) / 1000;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function print(rows: BenchRow[]): void {
  const base = rows.find((r) => r.name === 'link-create');
  const baseRate = base ? base.links / base.seconds : null;
  const lines = [
    `| benchmark | setup | links/s | × link-create | visits/s | seconds (wall) | CPU s | links, visits per CPU s | peak RSS MB | notes |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map((r) => {
      const rate = r.links / r.seconds;
      return (
        `| ${r.name} | ${r.setup} | ${fmt(rate)} | ${baseRate ? (rate / baseRate).toFixed(1) : ''} | ${r.visits ? fmt(r.visits / r.seconds) : ''} | ` +
        `${r.seconds.toFixed(1)} (${r.wallSeconds.toFixed(1)}) | ${r.cpuSeconds?.toFixed(1) ?? ''} | ${r.cpuSeconds ? `${fmt(r.links / r.cpuSeconds)}, ${fmt(r.visits / r.cpuSeconds)}` : ''} | ` +
        `${r.peakRssBytes === null ? '' : (r.peakRssBytes / 1048576).toFixed(0)} | ${r.notes} |`
      );
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n${JSON.stringify({ links: LINKS, visits: VISITS, rows })}\n`);
}

const wanted = (name: string) => !ONLY || ONLY.includes(name);
const work = mkdtempSync(path.join(tmpdir(), 'ferry-import-bench-'));
const rows: BenchRow[] = [];
try {
  if (wanted('link-create')) rows.push(await linkCreateRow(work));
  if (wanted('import-yourls')) {
    let started = performance.now();
    const yourls = await createYourlsDatabase(MYSQL_URL, LINKS, VISITS);
    log(
      `YOURLS database of ${fmt(LINKS)} links and ${fmt(VISITS)} visits made in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    try {
      started = performance.now();
      const row = await importRow(
        work,
        'import-yourls',
        `ferry import yourls: ${fmt(LINKS)} links, ${fmt(VISITS)} visits (MariaDB, local socket)`,
        ['yourls', '--database', yourls.url],
      );
      rows.push(row);
      if (!TARGET) rows.push(floorRow(path.join(work, 'import-yourls', 'ferry.db'), work, row));
      // The import again just before the switch (docs/migrating.md): the source gained NEW_VISITS visits since.
      await yourls.addVisits(NEW_VISITS);
      const again = await importRow(
        work,
        'import-yourls-again',
        `the same import again, ${fmt(NEW_VISITS)} visits newer in the source`,
        ['yourls', '--database', yourls.url],
        'import-yourls',
      );
      rows.push({
        ...again,
        notes: `${again.notes}; ${((again.seconds / row.seconds) * 100).toFixed(1)} % of the first run's time`,
      });
    } finally {
      await yourls.drop();
    }
  }
  if (wanted('import-csv')) {
    const file = path.join(work, 'links.csv');
    await writeGenericCsv(file, LINKS);
    rows.push(
      await importRow(work, 'import-csv', `ferry import csv: ${fmt(LINKS)} links (generic CSV file)`, [
        'csv',
        '--file',
        file,
      ]),
    );
  }
  print(rows);
} finally {
  rmSync(work, { recursive: true, force: true });
}
