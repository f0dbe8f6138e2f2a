import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../lib/clock.js';
import type { ClickEvent } from '../event/click-event.js';
import { ClickBatch } from '../rollups/click-batch.js';
import type { ClickWriter, JournalMark } from '../rollups/click-writer.js';
import type { ClickSink } from './click-sink.js';
import { createDropCounter } from './dropped-clicks.js';

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

/** The in-process queue; depth() for the Redis stream's fallback, which checks the bound on every click. */
export interface MemoryClickQueue extends ClickSink {
  depth(): number;
}

/** written batches kept for reuse */
const SPARE_BATCHES = 4;
const CLOSE_ATTEMPTS = 3;

/**
 * The queued clicks in ClickBatch columns, in enqueue order: enqueuing copies the fields and allocates nothing,
 * and taking a batch is O(1). Written batches are reused.
 */
class QueuedBatches {
  depth = 0;
  private readonly batches: ClickBatch[] = [];
  private readonly spare: ClickBatch[] = [];

  constructor(
    readonly capacity: number,
    private readonly spares: number,
  ) {}

  push(event: ClickEvent): void {
    let last = this.batches[this.batches.length - 1];
    // A window written in part keeps exactly its clicks (its journal positions): nothing joins it.
    if (last === undefined || last.full || last.written) {
      last = this.spare.pop() ?? new ClickBatch(this.capacity);
      this.batches.push(last);
    }
    last.push(event);
    this.depth += 1;
  }

  /** The oldest batch, taken out: full, or the last one, or a window written in part (written again alone as it is). */
  take(): ClickBatch {
    const batch = this.batches.shift()!;
    this.depth -= batch.length;
    return batch;
  }

  /** A batch whose write failed goes back to the front (without what a window writer committed of it). */
  putBack(batch: ClickBatch): void {
    this.batches.unshift(batch);
    this.depth += batch.length;
  }

  recycle(batch: ClickBatch): void {
    batch.reset();
    if (this.spare.length < this.spares && batch.capacity === this.capacity) this.spare.push(batch);
  }
}

/**
 * How a batch is written: with the journal, under its JournalMark (the journal's positions are the clicks
 * committed since start, in enqueue order, which is the order batches commit in); `committed` moves them on.
 */
function journaledWrites(opts: Pick<MemoryClickQueueOptions, 'writer' | 'journal' | 'holdFresh' | 'onWritten'>) {
  const { writer, journal } = opts;
  if (journal !== undefined && !writer.writeBatch)
    throw new Error('a journaled click queue needs a writer that takes batches');
  let position = 0;
  return {
    write(batch: ClickBatch, span: number): Promise<void> {
      if (journal === undefined) return writer.writeBatch ? writer.writeBatch(batch) : writer.write(batch.toEvents());
      const w = batch.written;
      const mark: JournalMark = {
        journal,
        first: position,
        end: position + span,
        ...(w ? { after: { link: w.link, count: w.count } } : {}),
      };
      if (opts.holdFresh?.()) mark.holdFresh = true;
      return writer.writeBatch!(batch, mark);
    },
    committed(n: number): void {
      position += n;
      opts.onWritten?.(n);
    },
  };
}

/**
 * A bounded in-memory queue drained by a timer and by size. Clicks are kept in batches of `batchSize`, or for a
 * window writer of its window. A failed write puts its batch back at the front and is retried on the next
 * tick; meanwhile the bound still holds, and overflow is dropped and counted.
 */
export function createMemoryClickQueue(opts: MemoryClickQueueOptions): MemoryClickQueue {
  const { writer, limit, log, clock } = opts;
  /**
   * A window writer's clicks go straight into the batch they will be written in, a window: taking it costs
   * nothing. (Windows joined from batches of CLICK_BATCH_SIZE re-interned every text: 9–14 ms on the event loop
   * for the 43,000 clicks of one CLICK_FLUSH_MS under a redirect load, 35–39 ms for 250,000.) A window writer is
   * worth more the larger its writes: it writes on the timer or once a window waits.
   */
  const capacity = writer.window ?? opts.batchSize;
  // a window's columns are 44 bytes a click: 22 MB for 500,000 (their pages are touched as it fills)
  const queued = new QueuedBatches(capacity, writer.window === undefined ? SPARE_BATCHES : 1);
  const writes = journaledWrites(opts);
  let closed = false;
  const drops = createDropCounter(
    log,
    clock.now,
    () => ({ depth: queued.depth, limit }),
    'click queue full: clicks dropped',
  );
  const drainer = createDrainer({ queued, writes, log, clock, eager: writer.window === undefined });
  const timer = setInterval(() => void drainer.drain(), opts.flushMs);
  timer.unref();

  return {
    enqueue(event) {
      if (closed || queued.depth >= limit) return drops.drop(closed);
      queued.push(event);
      if (queued.depth >= capacity) drainer.soon();
      return true;
    },
    settled: () => null,
    depth: () => queued.depth,
    flush: drainer.flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await closeFlushing(drainer.flush, () => queued.depth, log);
    },
    status: () => ({
      depth: queued.depth,
      dropped: drops.count(),
      lastFlushAt: drainer.lastFlushAt(),
      fellBack: 0,
      stream: null,
      journalReplaying: false,
    }),
  };
}

interface DrainerDeps {
  queued: QueuedBatches;
  writes: ReturnType<typeof journaledWrites>;
  log: FastifyBaseLogger;
  clock: Clock;
  /** every drain writes until the queue is empty (false: a window writer, see writeAll) */
  eager: boolean;
}

/** One writer at a time, on the timer, on the size trigger (soon) and on flush. */
function createDrainer({ queued, writes, log, clock, eager }: DrainerDeps) {
  let draining: Promise<boolean> | null = null;
  let drainScheduled = false;
  let lastFlushAt: number | null = null;

  /**
   * Writes until the queue is empty; false if a write failed (its batch is queued again). Never rejects.
   * A window writer's drain on the timer or the size trigger (`all` false) writes one window and then only
   * full ones: writing the few clicks that arrived during a write at once would keep windows as small as
   * a write is short (measured under a redirect load: a median of 10 clicks per write).
   */
  const writeAll = async (all: boolean): Promise<boolean> => {
    for (
      let first = true;
      queued.depth > 0 && (all || eager || first || queued.depth >= queued.capacity);
      first = false
    ) {
      const batch = queued.take();
      const span = batch.written?.span ?? batch.length;
      try {
        await writes.write(batch, span);
        lastFlushAt = clock.now();
        writes.committed(span);
      } catch (err) {
        // A window writer that committed part of the batch has dropped that part from it (sqlite-click-writer.ts):
        // the journal's clicks count as committed only once the whole window is.
        queued.putBack(batch);
        log.error({ err, batch: batch.length, depth: queued.depth }, 'writing clicks failed; will retry');
        return false;
      }
      queued.recycle(batch);
    }
    return true;
  };

  /** `finally` runs after the assignment even when there was nothing to write. */
  const drain = (all = false): Promise<boolean> => {
    draining ??= writeAll(all).finally(() => {
      draining = null;
    });
    return draining;
  };

  return {
    drain,
    lastFlushAt: () => lastFlushAt,
    /** A drain off the request's path: the redirect answers first. */
    soon(): void {
      if (drainScheduled) return;
      drainScheduled = true;
      setImmediate(() => {
        drainScheduled = false;
        void drain();
      });
    },
    async flush(): Promise<void> {
      // A drain in progress may have taken its batch before the caller's clicks arrived: drain again.
      if (draining) await draining;
      if (!(await drain(true))) throw new Error(`writing clicks failed; ${queued.depth} clicks are still queued`);
    },
  };
}

/** The last flush at shutdown: a database that hiccups gets a few chances before clicks are given up (and logged). */
async function closeFlushing(flush: () => Promise<void>, depth: () => number, log: FastifyBaseLogger): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await flush();
      return;
    } catch (err) {
      if (attempt >= CLOSE_ATTEMPTS) {
        log.error({ err, lost: depth() }, 'clicks could not be written before shutdown');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}
