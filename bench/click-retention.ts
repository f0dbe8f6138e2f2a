/**
 * CLICK_RETENTION_DAYS's deletion under load (SPEC §24, src/modules/clicks/click-retention.ts), on the embedded
 * engine: ROWS click records older than the retention (10,000,000 by default) over LINKS links are written
 * straight into a fresh database, then the retention job's deletion runs on the main connection while Ferry's
 * click writer (the SQLite writer thread, its own connection) writes a batch of recent clicks every 50 ms.
 *
 * The figure is the click writer's longest stall: the longest write of a batch while the deletion runs (goal
 * under 100 ms), beside the same before it starts; and the event loop's longest delay (better-sqlite3 runs the
 * deletion's statements synchronously on it, as in the server). Prints one JSON line.
 *
 *   ROWS=1000000 npx tsx bench/click-retention.ts      (a quick check)
 *   npx tsx bench/click-retention.ts                   (10 M records: a few minutes, ~2 GB of disk in TMPDIR)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClickEvent } from '../src/modules/clicks/event/click-event.js';
import { deleteExpiredClicks } from '../src/modules/clicks/click-retention.js';
import { clickWriterFor } from '../src/modules/clicks/click-ingest.js';
import { openMigrated, seedLinks } from './lib/seed.js';

const ROWS = Number(process.env.ROWS ?? 10_000_000);
const LINKS = Number(process.env.LINKS ?? 1_000);
const DAY = 86_400_000;
const RETENTION_DAYS = 30;
const WRITE_EVERY_MS = 50;
const WRITE_BATCH = 200;
const BASELINE_MS = 5_000;

const dir = mkdtempSync(path.join(process.env.TMPDIR ?? tmpdir(), 'ferry-retention-bench-'));
const now = Date.now();
try {
  const storage = await openMigrated(dir);
  const { sqlite } = storage;
  const links = seedLinks(storage, LINKS, now - 500 * DAY);
  const ids = (sqlite.prepare('select id from links order by id').all() as Array<{ id: number }>).map((r) => r.id);

  // ROWS records from 400 to 31 days ago, in time order (as a writer would have written them), round the links.
  const seedStart = performance.now();
  const insert = sqlite.prepare(
    'insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, is_bot, browser, os, device, country) values (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)',
  );
  const span = (400 - RETENTION_DAYS - 1) * DAY;
  const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
  const seed = sqlite.transaction((from: number, to: number) => {
    for (let i = from; i < to; i += 1) {
      const k = i % ids.length;
      const at = now - 400 * DAY + Math.floor((i / ROWS) * span);
      insert.run(
        ids[k],
        links[k]![0],
        at,
        `198.51.${(i >> 8) & 255}.${i & 255}`,
        UA,
        null,
        'Chrome',
        'Linux',
        'desktop',
        'NL',
      );
    }
  });
  for (let i = 0; i < ROWS; i += 200_000) seed(i, Math.min(ROWS, i + 200_000));
  sqlite.prepare('update links set first_click_at = ?, click_count = ?').run(now - 400 * DAY, Math.floor(ROWS / LINKS));
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  const seedSeconds = (performance.now() - seedStart) / 1000;

  // Ferry's click writer (the writer thread on its own connection), fed a batch of recent clicks every 50 ms.
  const writing = clickWriterFor(storage);
  const durations: Array<{ at: number; ms: number }> = [];
  let running = true;
  let written = 0;
  const writerLoop = (async () => {
    while (running) {
      const batch: ClickEvent[] = Array.from({ length: WRITE_BATCH }, (_, j) => {
        const k = (written + j) % ids.length;
        return {
          linkId: ids[k]!,
          shortCode: links[k]![0],
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
      p50Ms: +q(0.5).toFixed(1),
      p99Ms: +q(0.99).toFixed(1),
      maxMs: +(s.at(-1) ?? 0).toFixed(1),
    };
  };
  const left = (
    sqlite.prepare('select count(*) as n from clicks where clicked_at < ?').get(now - RETENTION_DAYS * DAY) as {
      n: number;
    }
  ).n;
  console.log(
    JSON.stringify({
      rows: ROWS,
      links: LINKS,
      seedSeconds: +seedSeconds.toFixed(1),
      deleted: run.deleted,
      oldLeft: left,
      deleteSeconds: +((deleteEnd - deleteStart) / 1000).toFixed(1),
      deletedPerSecond: Math.round(run.deleted / ((deleteEnd - deleteStart) / 1000)),
      statements: run.statements,
      longestStatementMs: +run.longestMs.toFixed(1),
      writerBefore: stat(durations.filter((d) => d.at < deleteStart).map((d) => d.ms)),
      writerDuring: stat(durations.filter((d) => d.at >= deleteStart && d.at < deleteEnd).map((d) => d.ms)),
      eventLoopMaxDelayMs: +(loop.max / 1e6).toFixed(1),
    }),
  );
  storage.sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
