import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../lib/clock.js';
import type { ClickEvent } from '../event/click-event.js';
import { ClickBatch } from '../rollups/click-batch.js';
import type { ClickWriter, JournalMark } from '../rollups/click-writer.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's click queue: depth() and dropped() for metrics, flush() to persist now. */
    clickQueue: ClickQueue;
  }
}

/**
 * Where the redirect puts clicks. The in-process implementation is below; the scale-out setup puts a Redis
 * Streams producer behind the same interface and drains it in a separate worker.
 */
/** A fixed-window counter in Redis (the redirect's per-address limit): INCR'd, expiring with its window. */
export interface ClickCounter {
  key: string;
  max: number;
  windowMs: number;
}

/** A counter after a request was counted: its value and the milliseconds its window has left. */
export interface CounterReading {
  count: number;
  ttlMs: number;
}

export interface ClickQueue {
  /** Never blocks and never throws; false when the queue is full and the click was dropped (and counted). */
  enqueue(event: ClickEvent): boolean;
  /** clicks waiting to be written */
  depth(): number;
  /** clicks dropped because the queue was full or closed, since start */
  dropped(): number;
  /** when the last write succeeded (clock ms), null before the first: metrics derive the flush lag from it */
  lastFlushAt(): number | null;
  /** Writes everything enqueued so far; rejects if the database refuses (the clicks stay queued). */
  flush(): Promise<void>;
  /** Stops the timer and writes everything that is queued (SIGTERM: no click is lost). */
  close(): Promise<void>;
  /**
   * A queue whose enqueue completes later (the Redis stream): resolves once every click enqueued so far is
   * durable, or null when nothing is pending. The redirect answers only after it (links.module.ts), so an
   * answered redirect is a click that survives the process being killed.
   */
  settled?(): Promise<void> | null;
  /**
   * The Redis stream's queue: counts a request against `counter` and, if it is within the counter's limit,
   * adds its click, in one script run per event-loop turn (the redirect's limit and its click cost one round
   * trip, not two). Resolves once the count is known and an admitted click is durable, with the count and
   * the window's remaining time, or null when Redis did not answer (the limit fails open; the click went to
   * the fallback queue). Returns null at once when the queue cannot take it now (closed, full, Redis down):
   * the caller counts and enqueues separately.
   */
  enqueueCounted?(event: ClickEvent, counter: ClickCounter): Promise<CounterReading | null> | null;
  /** the Redis stream's queue: clicks diverted to the in-process fallback since start */
  fellBack?(): number;
  /** the Redis stream's queue: backlog and live consumers, as last observed */
  stream?(): { backlog: number; consumers: number };
  /** the journaled queue: true until what earlier processes left in the journal is written (ClickJournal.replaying) */
  replaying?(): boolean;
}

export interface MemoryClickQueueOptions {
  writer: ClickWriter;
  /** CLICK_FLUSH_MS: the longest a click waits */
  flushMs: number;
  /** CLICK_BATCH_SIZE: a full batch is written at once, and no write is larger (a window writer's batches are its windows instead) */
  batchSize: number;
  /** CLICK_QUEUE_LIMIT: beyond this, clicks are dropped rather than memory growing without bound */
  limit: number;
  log: FastifyBaseLogger;
  clock: Clock;
  /** told how many more clicks, in enqueue order, are committed (the journal deletes what is written) */
  onWritten?: (clicks: number) => void;
  /**
   * The click journal's id, when every click enqueued is journaled at the next position: each batch is
   * written with its JournalMark (the writer must take batches: writeBatch).
   */
  journal?: string;
  /**
   * While true, the journaled writes leave data_fresh_as_of where it is (JournalMark.holdFresh): the journal's
   * replay of what an earlier process left behind is still running, so older clicks are not all counted yet.
   */
  holdFresh?: () => boolean;
}

const DROP_WARNING_INTERVAL_MS = 10_000;
const CLOSE_ATTEMPTS = 3;
/** written batches kept for reuse */
const SPARE_BATCHES = 4;

/**
 * A bounded in-memory queue drained by a timer and by size. Clicks are kept in ClickBatch columns of
 * `batchSize`, or for a window writer of its window (reused once written), so enqueuing copies the fields and
 * allocates nothing, and taking a batch is O(1). A failed write puts its batch back at the front and is retried
 * on the next tick; meanwhile the bound still holds, and overflow is dropped and counted.
 */
export function createMemoryClickQueue(opts: MemoryClickQueueOptions): ClickQueue {
  const { writer, batchSize, limit, log, clock } = opts;
  const batches: ClickBatch[] = [];
  const spare: ClickBatch[] = [];
  let depth = 0;
  let dropped = 0;
  let droppedSinceWarning = 0;
  let lastWarning = Number.NEGATIVE_INFINITY;
  let lastFlushAt: number | null = null;
  let closed = false;
  let draining: Promise<boolean> | null = null;
  let drainScheduled = false;

  const warnDropped = (): void => {
    const now = clock.now();
    if (now - lastWarning < DROP_WARNING_INTERVAL_MS) return;
    log.warn({ dropped: droppedSinceWarning, droppedTotal: dropped, depth, limit }, closed ? 'click after shutdown dropped' : 'click queue full: clicks dropped');
    lastWarning = now;
    droppedSinceWarning = 0;
  };

  if (opts.journal !== undefined && !writer.writeBatch) throw new Error('a journaled click queue needs a writer that takes batches');
  /**
   * A window writer's clicks go straight into the batch they will be written in, a window: taking it costs
   * nothing. (Windows joined from batches of CLICK_BATCH_SIZE re-interned every text: 9–14 ms on the event loop
   * for the 43,000 clicks of one CLICK_FLUSH_MS under a redirect load, 35–39 ms for 250,000.) A window writer is
   * worth more the larger its writes: it writes on the timer or once a window waits.
   */
  const capacity = writer.window ?? batchSize;
  // a window's columns are 44 bytes a click: 22 MB for 500,000 (their pages are touched as it fills)
  const spares = writer.window === undefined ? SPARE_BATCHES : 1;
  /** clicks committed since start: the journal position of the queue's first click */
  let position = 0;
  const write = (batch: ClickBatch, span: number): Promise<void> => {
    if (opts.journal !== undefined) {
      const w = batch.written;
      const mark: JournalMark = { journal: opts.journal, first: position, end: position + span, ...(w ? { after: { link: w.link, count: w.count } } : {}) };
      if (opts.holdFresh?.()) mark.holdFresh = true;
      return writer.writeBatch!(batch, mark);
    }
    return writer.writeBatch ? writer.writeBatch(batch) : writer.write(batch.toEvents());
  };
  const committed = (n: number): void => {
    position += n;
    opts.onWritten?.(n);
  };
  const recycle = (batch: ClickBatch): void => {
    batch.reset();
    if (spare.length < spares && batch.capacity === capacity) spare.push(batch);
  };

  /**
   * Writes until the queue is empty; false if a write failed (its batch is queued again). Never rejects.
   * A window writer's drain on the timer or the size trigger (`all` false) writes one window and then only
   * full ones: writing the few clicks that arrived during a write at once would keep windows as small as
   * a write is short (measured under a redirect load: a median of 10 clicks per write).
   */
  const writeAll = async (all: boolean): Promise<boolean> => {
    const eager = all || writer.window === undefined;
    for (let first = true; depth > 0 && (eager || first || depth >= capacity); first = false) {
      // A batch is full, or the last one, or (a window written in part) written again alone as it is.
      const batch = batches.shift()!;
      const size = batch.length;
      const span = batch.written?.span ?? size;
      depth -= size;
      try {
        await write(batch, span);
        lastFlushAt = clock.now();
        committed(span);
      } catch (err) {
        // A window writer that committed part of the batch has dropped that part from it (sqlite-click-writer.ts):
        // the journal's clicks count as committed only once the whole window is.
        batches.unshift(batch);
        depth += batch.length;
        log.error({ err, batch: batch.length, depth }, 'writing clicks failed; will retry');
        return false;
      }
      recycle(batch);
    }
    return true;
  };

  /** One writer at a time; `finally` runs after the assignment even when there was nothing to write. */
  const drain = (all = false): Promise<boolean> => {
    draining ??= writeAll(all).finally(() => {
      draining = null;
    });
    return draining;
  };

  const flush = async (): Promise<void> => {
    // A drain in progress may have taken its batch before the caller's clicks arrived: drain again.
    if (draining) await draining;
    if (!(await drain(true))) throw new Error(`writing clicks failed; ${depth} clicks are still queued`);
  };

  const scheduleDrain = (): void => {
    drainScheduled = false;
    void drain();
  };

  const timer = setInterval(() => void drain(), opts.flushMs);
  timer.unref();

  return {
    enqueue(event) {
      if (closed || depth >= limit) {
        dropped += 1;
        droppedSinceWarning += 1;
        warnDropped();
        return false;
      }
      let last = batches[batches.length - 1];
      // A window written in part keeps exactly its clicks (its journal positions): nothing joins it.
      if (last === undefined || last.full || last.written) {
        last = spare.pop() ?? new ClickBatch(capacity);
        batches.push(last);
      }
      last.push(event);
      depth += 1;
      if (depth >= capacity && !drainScheduled) {
        // Off the request's path: the redirect answers first.
        drainScheduled = true;
        setImmediate(scheduleDrain);
      }
      return true;
    },
    depth: () => depth,
    dropped: () => dropped,
    lastFlushAt: () => lastFlushAt,
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      // A database that hiccups at shutdown gets a few chances before clicks are given up (and logged).
      for (let attempt = 1; ; attempt += 1) {
        try {
          await flush();
          return;
        } catch (err) {
          if (attempt >= CLOSE_ATTEMPTS) {
            log.error({ err, lost: depth }, 'clicks could not be written before shutdown');
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
      }
    },
  };
}
