/**
 * CLICK_RETENTION_DAYS's deletion under load (SPEC §24, src/modules/clicks/click-retention.ts): ROWS click records
 * older than the retention (10,000,000 by default) over LINKS links are written straight into a fresh database, then
 * the retention job's deletion runs while Ferry's click writer (on SQLite the writer thread with its own
 * connection, on PostgreSQL the set writer) writes a batch of recent clicks every 50 ms.
 *
 * The figure is the click writer's longest stall: the longest write of a batch while the deletion runs (goal
 * under 100 ms), beside the same for the writer alone before it starts (BASELINE_MS, 30 s); the longest
 * deletion statement (what the writer can wait for the write lock); and the event loop's longest delay
 * (better-sqlite3 runs the deletion's statements synchronously on it, as in the server). Prints one JSON line.
 * On a virtual disk the writer alone stalls for a few hundred milliseconds now and then (its commits wait for
 * the disk): TMPDIR=/dev/shm runs the same in memory, where what is left is the database's own share.
 *
 *   ROWS=1000000 npx tsx bench/click-retention.ts      (a quick check)
 *   npx tsx bench/click-retention.ts                   (10 M records: a few minutes, ~2 GB of disk in TMPDIR)
 *   DATABASE_URL=postgres://…/empty npx tsx bench/click-retention.ts   (PostgreSQL: an empty database)
 *   PAUSE_FACTOR=3 …                                    (the job's pause after a statement, × its time)
 *
 * On PostgreSQL the job is run as on an unpartitioned table: in production the months wholly past are dropped
 * as partitions first (instant), and only the month at the cutoff is deleted in batches; here all ROWS are.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { createClickPartitions, monthStart } from '../src/db/click-partitions.js';
import { createStorage, type Storage } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import type { ClickEvent } from '../src/modules/clicks/event/click-event.js';
import { deleteExpiredClicks } from '../src/modules/clicks/click-retention.js';
import { clickWriterFor } from '../src/modules/clicks/click-ingest.js';
import { openMigrated, seedLinks, seedLinksPortable } from './lib/seed.js';

const ROWS = Number(process.env.ROWS ?? 10_000_000);
const LINKS = Number(process.env.LINKS ?? 1_000);
const DAY = 86_400_000;
const RETENTION_DAYS = 30;
const WRITE_EVERY_MS = 50;
const WRITE_BATCH = 200;
/** The writer alone first, as long: its own stalls on this disk, beside those while the deletion runs. */
const BASELINE_MS = Number(process.env.BASELINE_MS ?? 30_000);
/** The writer's first writes prepare its statements and read its pages: left out of both. */
const WARM_UP_WRITES = 5;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
/** The records span from 400 days ago to the day after the cutoff, in time order, round the links. */
const SPAN = (400 - RETENTION_DAYS - 1) * DAY;

/** Seeds the embedded database through its own connection; returns the links' ids and codes. */
function seedSqlite(storage: Awaited<ReturnType<typeof openMigrated>>, now: number): Array<[number, string]> {
  const { sqlite } = storage;
  const links = seedLinks(storage, LINKS, now - 500 * DAY);
  const ids = (sqlite.prepare('select id from links order by id').all() as Array<{ id: number }>).map((r) => r.id);
  const insert = sqlite.prepare(
    'insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, is_bot, browser, os, device, ' +
      'country) values (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)',
  );
  const seed = sqlite.transaction((from: number, to: number) => {
    for (let i = from; i < to; i += 1) {
      const k = i % ids.length;
      const at = now - 400 * DAY + Math.floor((i / ROWS) * SPAN);
      const ip = `198.51.${(i >> 8) & 255}.${i & 255}`;
      insert.run(ids[k], links[k]![0], at, ip, UA, null, 'Chrome', 'Linux', 'desktop', 'NL');
    }
  });
  for (let i = 0; i < ROWS; i += 200_000) seed(i, Math.min(ROWS, i + 200_000));
  sqlite.prepare('update links set first_click_at = ?, click_count = ?').run(now - 400 * DAY, Math.floor(ROWS / LINKS));
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  return ids.map((id, k) => [id, links[k]![0]]);
}

/** Seeds PostgreSQL set-wise (generate_series), into the monthly partitions the records need. */
async function seedPostgres(storage: Storage, now: number): Promise<Array<[number, string]>> {
  const db = storage.db;
  await seedLinksPortable(db, LINKS, now - 500 * DAY);
  const months: number[] = [];
  for (let at = monthStart(now - 400 * DAY); at <= now; at = monthStart(at, 1)) months.push(at);
  await db.transaction().execute((tx) => createClickPartitions(tx as unknown as Kysely<unknown>, now, months));
  const start = now - 400 * DAY;
  for (let from = 0; from < ROWS; from += 1_000_000) {
    const to = Math.min(ROWS, from + 1_000_000) - 1;
    await sql`insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, is_bot, browser, os,
        device, country)
      select l.id, l.short_code, ${start}::bigint + floor(g::float8 / ${ROWS} * ${SPAN})::bigint,
        '198.51.' || ((g >> 8) & 255) || '.' || (g & 255), ${UA}, null, 0, 'Chrome', 'Linux', 'desktop', 'NL'
      from generate_series(${from}::bigint, ${to}::bigint) g
      join (select id, short_code, row_number() over (order by id) - 1 as k from links) l on l.k = g % ${LINKS}`.execute(
      db,
    );
  }
  await sql`update links set first_click_at = ${start}, click_count = ${Math.floor(ROWS / LINKS)}`.execute(db);
  await sql`vacuum analyze clicks`.execute(db);
  const rows = await db.selectFrom('links').select(['id', 'short_code']).orderBy('id').execute();
  return rows.map((r) => [Number(r.id), r.short_code]);
}

const dir = mkdtempSync(path.join(process.env.TMPDIR ?? tmpdir(), 'ferry-retention-bench-'));
const now = Date.now();
try {
  const postgres = process.env.DATABASE_URL ?? null;
  const storage = postgres
    ? createStorage({ databaseUrl: postgres, dataDir: dir, dbPoolMax: 4 })
    : await openMigrated(dir);
  if (postgres) await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  const seedStart = performance.now();
  const links = postgres
    ? await seedPostgres(storage, now)
    : seedSqlite(storage as Awaited<ReturnType<typeof openMigrated>>, now);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  // The seed's gigabytes are still being written back from the page cache: let them reach the disk first, so
  // that neither the writer alone nor the deletion waits behind them (writes of the writer alone took up to a
  // second while they were).
  if (postgres) await sql`checkpoint`.execute(storage.db);
  execFileSync('sync');

  // Ferry's click writer (the writer thread on its own connection), fed a batch of recent clicks every 50 ms.
  const writing = clickWriterFor(storage);
  const durations: Array<{ at: number; ms: number }> = [];
  let running = true;
  let written = 0;
  const writerLoop = (async () => {
    while (running) {
      const batch: ClickEvent[] = Array.from({ length: WRITE_BATCH }, (_, j) => {
        const [linkId, shortCode] = links[(written + j) % links.length]!;
        return {
          linkId,
          shortCode,
          clickedAt: Date.now(),
          ip: `203.0.113.${j}`,
          userAgent: UA,
          referrer: null,
          country: 'DE',
        };
      });
      const started = performance.now();
      await writing.writer.write(batch);
      durations.push({ at: started, ms: performance.now() - started });
      written += WRITE_BATCH;
      await sleep(WRITE_EVERY_MS);
    }
  })();

  await sleep(BASELINE_MS);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const deleteStart = performance.now();
  const run = await deleteExpiredClicks({
    db: storage.db,
    clock: { now: () => now },
    days: RETENTION_DAYS,
    partitioned: false,
    log: { info: () => undefined },
    ...(process.env.PAUSE_FACTOR ? { pauseFactor: Number(process.env.PAUSE_FACTOR) } : {}),
  });
  const deleteEnd = performance.now();
  loop.disable();
  running = false;
  await writerLoop;
  await writing.close();

  const stat = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
    return {
      writes: s.length,
      over100Ms: s.filter((ms) => ms > 100).length,
      p50Ms: +q(0.5).toFixed(1),
      p99Ms: +q(0.99).toFixed(1),
      maxMs: +(s.at(-1) ?? 0).toFixed(1),
    };
  };
  const left = await storage.db
    .selectFrom('clicks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('clicked_at', '<', now - RETENTION_DAYS * DAY)
    .executeTakeFirstOrThrow();
  console.log(
    JSON.stringify({
      engine: postgres ? 'postgres' : 'sqlite',
      rows: ROWS,
      links: LINKS,
      seedSeconds: +seedSeconds.toFixed(1),
      deleted: run.deleted,
      oldLeft: Number(left.n),
      deleteSeconds: +((deleteEnd - deleteStart) / 1000).toFixed(1),
      deletedPerSecond: Math.round(run.deleted / ((deleteEnd - deleteStart) / 1000)),
      statements: run.statements,
      longestStatementMs: +run.longestMs.toFixed(1),
      writerBefore: stat(
        durations
          .slice(WARM_UP_WRITES)
          .filter((d) => d.at < deleteStart)
          .map((d) => d.ms),
      ),
      writerDuring: stat(durations.filter((d) => d.at >= deleteStart && d.at < deleteEnd).map((d) => d.ms)),
      // The ten longest writes: seconds from the writer's first (the deletion starts at BASELINE_MS), and ms.
      longestWrites: [...durations]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 10)
        .map((d) => [+((d.at - durations[0]!.at) / 1000).toFixed(1), Math.round(d.ms)]),
      eventLoopMaxDelayMs: +(loop.max / 1e6).toFixed(1),
    }),
  );
  await storage.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
