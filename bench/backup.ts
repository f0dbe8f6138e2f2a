/**
 * `ferry backup` and `ferry restore` on a database of a million clicks, while the server runs and answers
 * redirects. Compiled server and CLI (`npm run build` first):
 *
 *   node --import tsx bench/backup.ts
 *
 * 1. A DATA_DIR with LINKS links (default 1,000) and CLICKS clicks (default 1,000,000): the clicks are left in
 *    journal segments and the server, started on the directory, writes them (its replay), as it would have.
 * 2. Baseline: a plain copy of the database file (what `cp` would do, not consistent while the server writes).
 * 3. `ferry backup` at gzip levels 1 (the default) and 6, each while 4 connections keep visiting links: wall
 *    time from spawn to exit, and the file's size; the ratio of each time to the baseline copy.
 * 4. `ferry restore` of the level-1 file into an empty directory: wall time.
 *
 * Prints a table and one JSON line. Env: LINKS, CLICKS.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort, ROOT, SERVER_ARGS } from './lib/proc.js';
import { openMigrated, seedLinks, writeLeftOverJournal } from './lib/seed.js';

const LINKS = Number(process.env.LINKS ?? 1_000);
const CLICKS = Number(process.env.CLICKS ?? 1_000_000);
const REPLAYED = 'click journal replayed';

/** Links, and clicks left in the journal for the server to write. */
async function seed(dir: string): Promise<string[]> {
  const storage = await openMigrated(dir);
  const now = Date.now();
  const links = seedLinks(storage, LINKS, now);
  const ids = storage.sqlite.prepare('select id, short_code from links').all() as Array<{
    id: number;
    short_code: string;
  }>;
  await storage.close();
  writeLeftOverJournal(dir, CLICKS, (i) => ({
    linkId: ids[i % ids.length]!.id,
    shortCode: ids[i % ids.length]!.short_code,
    clickedAt: now - 30 * 86_400_000 + i * 2_000,
    ip: `198.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    userAgent: `Mozilla/5.0 (X11; Linux x86_64) Chrome/${100 + (i % 30)}.0`,
    referrer: i % 3 === 0 ? 'https://news.example/' : null,
  }));
  return links.map(([code]) => code);
}

/** Runs the compiled CLI and measures it from spawn to exit (asynchronously: the visits go on meanwhile). */
async function ferry(args: string[], env: Record<string, string>): Promise<{ ms: number; out: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/src/cli/ferry.js', ...args, '--json'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`ferry ${args.join(' ')}: exit ${code}\n${err}`);
  return { ms: performance.now() - started, out };
}

/** Visits links over 4 connections until stopped; resolves with how many were answered. */
function visit(url: string, codes: string[]): { stop: () => Promise<number> } {
  let stopped = false;
  let answered = 0;
  const one = async (k: number) => {
    for (let i = k; !stopped; i += 4) {
      const res = await fetch(`${url}/${codes[i % codes.length]}`, { redirect: 'manual' });
      await res.arrayBuffer();
      answered += 1;
    }
  };
  const all = Promise.all([0, 1, 2, 3].map(one));
  return { stop: async () => ((stopped = true), await all, answered) };
}

const dir = mkdtempSync(path.join(tmpdir(), 'ferry-backup-bench-'));
try {
  const data = path.join(dir, 'data');
  const codes = await seed(data);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, [...SERVER_ARGS], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      DATA_DIR: data,
      PORT: String(port),
      LOG_LEVEL: 'info',
      REDIRECT_RATE_LIMIT_PER_MINUTE: '10000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) =>
    createInterface({ input: server.stdout! }).on('line', (line) => line.includes(REPLAYED) && resolve()),
  );

  const copyStarted = performance.now();
  copyFileSync(path.join(data, 'ferry.db'), path.join(dir, 'copy.db'));
  const copyMs = performance.now() - copyStarted;
  const dbBytes = statSync(path.join(dir, 'copy.db')).size;

  const rows: Array<{ what: string; ms: number; bytes: number; visits?: number }> = [
    { what: 'cp ferry.db (baseline)', ms: copyMs, bytes: dbBytes },
  ];
  let manifest: { database: { clicks: number } } | null = null;
  for (const level of ['1', '6']) {
    const load = visit(url, codes);
    const file = path.join(dir, `backup-${level}.tar.gz`);
    const run = await ferry(['backup', file, '--level', level], { DATA_DIR: data });
    manifest ??= (JSON.parse(run.out) as { manifest: { database: { clicks: number } } }).manifest;
    rows.push({
      what: `ferry backup --level ${level}`,
      ms: run.ms,
      bytes: statSync(file).size,
      visits: await load.stop(),
    });
  }
  const restored = await ferry(['restore', path.join(dir, 'backup-1.tar.gz')], {
    DATA_DIR: path.join(dir, 'restored'),
  });
  rows.push({
    what: 'ferry restore (level 1 file)',
    ms: restored.ms,
    bytes: statSync(path.join(dir, 'restored', 'ferry.db')).size,
  });
  server.kill('SIGTERM');

  const mib = (b: number) => (b / 1048576).toFixed(1);
  process.stdout.write(`database: ${manifest?.database.clicks} clicks over ${LINKS} links, ${mib(dbBytes)} MiB\n`);
  process.stdout.write(
    `${'what'.padEnd(30)} ${'seconds'.padStart(8)} ${'MiB'.padStart(8)} ${'× cp'.padStart(6)} visits answered meanwhile\n`,
  );
  for (const r of rows)
    process.stdout.write(
      `${r.what.padEnd(30)} ${(r.ms / 1000).toFixed(2).padStart(8)} ${mib(r.bytes).padStart(8)} ${(r.ms / copyMs).toFixed(1).padStart(6)} ${r.visits ?? ''}\n`,
    );
  process.stdout.write(`${JSON.stringify({ clicks: manifest?.database.clicks, links: LINKS, dbBytes, rows })}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
