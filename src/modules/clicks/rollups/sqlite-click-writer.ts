import type { ResourceLimits } from 'node:worker_threads';
import { MAIN_CONNECTION_AUTOCHECKPOINT_PAGES, type Checkpointer } from '../../../db/sqlite-checkpointer.js';
import { closeModuleThread, startModuleThread } from '../../../infra/module-thread.js';
import { ClickBatch, transferablesOf, type WindowProgress } from './click-batch.js';
import type { ClickWriter, JournalMark } from './click-writer.js';
import type { SqliteClickThreadData, SqliteClickThreadReply, SqliteClickThreadRequest } from './sqlite-click-thread.js';

/**
 * The click writer on the embedded engine: the same rows as the portable writer in pg-click-writer.ts,
 * written by a worker thread with its own better-sqlite3 connection.
 *
 * Why a thread: better-sqlite3 is synchronous, so on the main thread a batch held the event loop for its
 * whole transaction (measured: a redirect p99 of 54 ms). The main thread now does nothing per click but
 * copy it into a ClickBatch (click-batch.ts); per batch it posts the columns, once. The worker
 * groups the clicks into the rollups' increments itself, writes them, and answers.
 *
 * The worker runs at a lower scheduling priority (nice) than the event loop: when the CPU is short, a
 * redirect is answered first and the click waits in the queue (bounded by CLICK_QUEUE_LIMIT).
 * Transactions are kept to about TX_BUDGET_MS each (their size adapts to the measured cost per click), with
 * a pause between them, so that an API write on the main connection never waits for the write lock long.
 * See sqlite-click-thread.ts for what one transaction writes.
 */
const TX_BUDGET_MS = 50;
/**
 * Clicks per write at most (the queue gathers clicks in windows this large): the thread sorts a write by link,
 * so the larger it is, the more of a transaction's pages, hours and daily values are shared between clicks.
 * Measured with bench/ingest.ts, uniform over 100,000 links, fresh visits, the writer thread's CPU per click:
 * 50,000 clicks a window 18.6 µs (the whole process 24.6), 250,000 11.7 µs, 500,000 9.4–9.7 µs (45,000 → 73,000 →
 * 87,000–93,000 clicks/s). Windows this large form only from a backlog (the queue writes on CLICK_FLUSH_MS what
 * waits), so the writer gets cheaper per click exactly when it is behind. The price: the window's memory while
 * it is gathered and written (CLICK_QUEUE_LIMIT's embedded default holds two), and the event loop's share of
 * posting it (its columns and distinct texts: 7–15 ms for a full window).
 */
const WINDOW_CLICKS = 500_000;
const WORKER_NICE = 10;
/**
 * The thread's young generation (V8's `resourceLimits`), 8 MB of new space where the default on 64 bits is 32:
 * the thread holds about 5 MB of live objects between windows, but it allocates a window's click objects a
 * transaction at a time, and V8 grew its new space to the default's whole 32 MB under any load. Measured
 * (docs/performance.md, Memory): the thread's heap at most 62–81 → 48–52 MB under a redirect load; the writer's
 * CPU per click about 2 % more (more scavenges). V8 reads `--max-semi-space-size` for every isolate of the process
 * and lets it override this limit: `npm start` passes it (8 MB a semi-space), so a server's writer has the main
 * thread's 16 MB of new space; this limit holds where node runs without that flag.
 */
const WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 12 };

/** sqlite-click-thread.ts, a module of its own (infra/module-thread.ts), within WORKER_LIMITS. */
const startThread = (workerData: SqliteClickThreadData) =>
  startModuleThread(import.meta.url, './sqlite-click-thread', { workerData, resourceLimits: WORKER_LIMITS });

export interface ClosableClickWriter extends ClickWriter {
  close(): Promise<void>;
}

export interface SqliteClickWriterOptions {
  /** a transaction's time (tests make it tiny, so that a window takes many transactions) */
  budgetMs?: number;
  /** the database's checkpoints, which the thread takes over while it runs (a thread fewer in the process) */
  checkpoints?: Checkpointer | null;
}

export function createSqliteClickWriter(
  file: string,
  { budgetMs = TX_BUDGET_MS, checkpoints = null }: SqliteClickWriterOptions = {},
): ClosableClickWriter {
  const handover = checkpoints?.handOver() ?? null;
  const workerData: SqliteClickThreadData = {
    file,
    autocheckpoint: MAIN_CONNECTION_AUTOCHECKPOINT_PAGES,
    checkpointMs: handover?.intervalMs ?? null,
    budgetMs,
    nice: WORKER_NICE,
  };
  const worker = startThread(workerData);
  // Idle, the worker must not keep the process alive; with writes in flight it must (a shutdown flush).
  worker.unref();
  // Stopped or failed, the thread gives the checkpoints back.
  worker.on('exit', () => handover?.release());
  const pending = new Map<number, { batch: ClickBatch; resolve: () => void; reject: (err: Error) => void }>();
  let nextId = 0;
  let failure: Error | null = null;

  const settle = (id: number, error?: string, written?: WindowProgress) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    if (error === undefined) return p.resolve();
    // The transactions that did commit are not written twice: the batch keeps only the rest, and is retried.
    if (written) p.batch.dropWritten(written.link, written.count);
    p.reject(new Error(`click write failed: ${error}`));
  };
  worker.on('message', (m: SqliteClickThreadReply) => {
    if ('id' in m) settle(m.id, m.error, m.written);
    else if ('checkpointError' in m) handover?.report(m.checkpointError);
  });
  const fail = (err: Error) => {
    failure = err;
    for (const id of [...pending.keys()]) settle(id, err.message);
  };
  worker.on('error', fail);
  worker.on('exit', () => fail(failure ?? new Error('click writer stopped')));

  const writeBatch = (batch: ClickBatch, mark?: JournalMark): Promise<void> => {
    if (batch.length === 0) return Promise.resolve();
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    const message = batch.toMessage();
    return new Promise<void>((resolve, reject) => {
      pending.set(id, { batch, resolve, reject });
      worker.ref();
      // The typed arrays are fresh copies: moved, not cloned.
      worker.postMessage(
        { id, batch: message, ...(mark ? { mark } : {}) } satisfies SqliteClickThreadRequest,
        transferablesOf(message),
      );
    });
  };

  return {
    window: WINDOW_CLICKS,
    writeBatch,
    write: (events) => writeBatch(ClickBatch.of(events)),
    async close() {
      if (!failure) await closeModuleThread(worker);
    },
  };
}
