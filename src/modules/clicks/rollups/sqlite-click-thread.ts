import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { checkpointSchedule } from '../../../db/sqlite-checkpoint-schedule.js';
import { SqliteDatabase as Database } from '../../../db/sqlite-driver.js';
import { eventsOfMessage, type ClickBatchMessage, type WindowProgress } from './click-batch.js';
import type { ClickEvent } from '../event/click-event.js';
import type { JournalMark } from './click-writer.js';
import { createSqliteRollupWriter } from './sqlite-rollup-writer.js';

/**
 * The click writer thread of sqlite-click-writer.ts: a module of its own (typed, linted), loaded compiled
 * from dist, or through tsx from the sources (tests, `npm run dev`, bench).
 *
 * A message is one window of clicks (up to sqlite-click-writer.ts's WINDOW_CLICKS, all the queue held). The
 * thread sorts it by link (then in queue order) and cuts it into transactions of about `budgetMs`; each
 * applies rollup-plan.ts's plan through sqlite-rollup-writer.ts (the statements the importer uses too).
 *
 * Measured costs it is shaped by (bench/): a statement is a few µs, a commit costs per page it dirties. Sorted
 * by link, the transactions of a window dirty each page about once for all of the window's clicks on it,
 * where unsorted transactions dirtied about five random pages per click (uniform traffic over 100,000 links:
 * 63 → 32 µs of CPU per click at 50,000 per window). The number of distinct values already stored per link,
 * day and kind is remembered between transactions instead of being counted every time.
 *
 * Exactly once with the click journal: a window's transactions commit link ranges, not a prefix of the
 * journal, so until its last one each moves the mark's window columns (migration 013): the window's end, and
 * the link (and how many of its clicks, in queue order) it is committed through. The last one moves
 * `committed` to the window's end and clears them. A failed transaction answers how far the window got;
 * the batch drops that part and is written again alone (memory-click-queue.ts). Foreign keys are not checked on
 * this connection: every row written belongs to a link whose row this same transaction has just read under
 * the write lock, which is the check.
 *
 * In a server the thread runs the database's WAL checkpoints too (`checkpointMs`, taken over from their own
 * thread: db/sqlite-checkpointer.ts), between a window's transactions and while it waits for the next window.
 */
export interface SqliteClickThreadData {
  file: string;
  autocheckpoint: number;
  /** the database's checkpoints, taken over from their own thread (db/sqlite-checkpointer.ts): their interval */
  checkpointMs: number | null;
  budgetMs: number;
  nice: number;
}

export type SqliteClickThreadRequest = 'close' | { id: number; batch: ClickBatchMessage; mark?: JournalMark };
/** `written`: on an error, the part of the batch committed before it (ClickBatch.dropWritten), if any. */
export type SqliteClickThreadReply =
  { closed: true } | { id: number; error?: string; written?: WindowProgress } | { checkpointError: string };

const data = workerData as SqliteClickThreadData;
/** how often the thread, waiting for work, looks whether a checkpoint is due */
const CHECKPOINT_TICK_MS = 1_000;
const port = parentPort!;

// Linux: a thread's own id names it for setpriority(), so only this thread yields to the event loop.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), data.nice);
} catch {
  // elsewhere: same priority
}

const db = new Database(data.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = OFF');
db.pragma('cache_size = -16384');
db.pragma(`wal_autocheckpoint = ${data.autocheckpoint}`);

const rollups = createSqliteRollupWriter(db);

// The WAL checkpoints: between a window's transactions, and while the thread waits for the next window.
const checkpoints =
  data.checkpointMs === null
    ? null
    : checkpointSchedule(db, data.checkpointMs, (error) =>
        port.postMessage({ checkpointError: error } satisfies SqliteClickThreadReply),
      );
const idle = checkpoints && setInterval(() => checkpoints.runIfDue(), CHECKPOINT_TICK_MS);

// data_fresh_as_of: this writer's latest flush (one row per writer, forgotten never: a few bytes each).
const markFresh = db.prepare<[string, number]>(
  'insert into click_ingest (writer, fresh_as_of) values (?, ?) ' +
    'on conflict (writer) do update set fresh_as_of = max(fresh_as_of, excluded.fresh_as_of)',
);
// The click journal's mark (click-journal.ts): how far its clicks are committed, in the same transaction.
const markJournal = db.prepare<[string, number, number | null, number | null, number | null]>(
  'insert into click_journal_marks (journal, committed, window_end, window_link, window_count) values (?, ?, ?, ?, ?) ' +
    'on conflict (journal) do update set committed = max(committed, excluded.committed), ' +
    'window_end = excluded.window_end, window_link = excluded.window_link, window_count = excluded.window_count',
);
const writerName = `sqlite:${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');
const rollback = db.prepare('rollback');

/** Distinct values stored per "link:kind:day" and "u:user:kind:day" (committed state only); bounded, forgotten wholesale. */
let valueCounts = new Map<string, number>();
const VALUE_COUNTS_REMEMBERED = 200_000;

/** The journal's mark as a transaction leaves it: a window partly written, or (window null) done through `committed`. */
interface MarkUpdate {
  journal: string;
  committed: number;
  window: (WindowProgress & { end: number }) | null;
}

/**
 * One transaction: `clicks`, the journal's mark moved as `mark` says, and with `fresh`, this writer's
 * data_fresh_as_of. Returns the value counts to remember once it has committed.
 */
function write(clicks: readonly ClickEvent[], mark: MarkUpdate | null, fresh: number | null): Map<string, number> {
  let counts: Map<string, number>;
  begin.run();
  try {
    counts = rollups.apply(clicks, { imported: false, known: valueCounts });
    if (fresh !== null) markFresh.run(writerName, fresh);
    if (mark)
      markJournal.run(
        mark.journal,
        mark.committed,
        mark.window?.end ?? null,
        mark.window?.link ?? null,
        mark.window?.count ?? null,
      );
    commit.run();
  } catch (err) {
    rollups.discard();
    if (db.inTransaction) rollback.run();
    throw err;
  }
  return counts;
}

const pause = new Int32Array(new SharedArrayBuffer(4));
let perClickMs = 0.05;

port.on('message', (message: SqliteClickThreadRequest) => {
  if (message === 'close') {
    if (idle) clearInterval(idle);
    db.close();
    port.postMessage({ closed: true } satisfies SqliteClickThreadReply);
    return;
  }
  const { batch, mark } = message;
  // By link, then in queue order: a link's clicks stay in order, and a transaction ends inside a link only
  // when that link alone is more than a transaction's worth. Sorted as indexes into the columns: a window's
  // clicks become objects one transaction at a time.
  const links = batch.numbers.linkId;
  const order = new Uint32Array(batch.length).map((_, i) => i).sort((a, b) => links[a]! - links[b]! || a - b);
  // data_fresh_as_of: the window's latest click, once all of it is committed (unless held: a replay is running).
  const fresh = mark?.holdFresh ? null : batch.numbers.clickedAt.reduce((latest, at) => Math.max(latest, at), 0);
  let done = 0;
  // how far the window got: its clicks of links below `link` and `count` of `link` (in this message)
  let written: WindowProgress | undefined;
  try {
    while (done < order.length) {
      if (done > 0) {
        checkpoints?.runIfDue();
        Atomics.wait(pause, 0, 0, 2); // room for the main connection's writes
      }
      const size = Math.min(order.length - done, Math.max(50, Math.round(data.budgetMs / perClickMs)));
      const chunk = eventsOfMessage(batch, order.subarray(done, done + size));
      const last = chunk[chunk.length - 1]!.linkId;
      let count = written?.link === last ? written.count : 0;
      for (const e of chunk) if (e.linkId === last) count += 1;
      const final = done + size === order.length;
      const before = mark?.after?.link === last ? mark.after.count : 0;
      const update: MarkUpdate | null = !mark
        ? null
        : final
          ? { journal: mark.journal, committed: mark.end, window: null }
          : {
              journal: mark.journal,
              committed: mark.first,
              window: { end: mark.end, link: last, count: before + count },
            };
      const started = performance.now();
      const counts = write(chunk, update, final ? fresh : null);
      perClickMs = Math.max(0.002, (performance.now() - started) / size);
      if (valueCounts.size + counts.size > VALUE_COUNTS_REMEMBERED) valueCounts = new Map();
      for (const [key, n] of counts) valueCounts.set(key, n);
      done += size;
      written = { link: last, count };
    }
    port.postMessage({ id: message.id } satisfies SqliteClickThreadReply);
  } catch (err) {
    valueCounts = new Map();
    port.postMessage({
      id: message.id,
      error: String((err as Error | undefined)?.message ?? err),
      ...(written ? { written } : {}),
    } satisfies SqliteClickThreadReply);
  }
});
