import type { ClickEvent } from '../event/click-event.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's click sink: status() for metrics and readiness, flush() to persist now (tests). */
    clickQueue: ClickSink;
  }
}

/** What a sink tells /metrics and /readyz, read at scrape time (nothing is pushed on the redirect's path). */
export interface ClickSinkStatus {
  /** clicks waiting to be written */
  depth: number;
  /** clicks dropped because the sink was full or closed, since start */
  dropped: number;
  /** when the last write succeeded (clock ms), null before the first: metrics derive the flush lag from it */
  lastFlushAt: number | null;
  /** the Redis stream: clicks diverted to the in-process fallback since start (0 elsewhere) */
  fellBack: number;
  /** the Redis stream: its backlog and live consumers, as last observed (null elsewhere) */
  stream: { backlog: number; consumers: number } | null;
  /** the journal: what earlier processes left in it is not all written yet (false elsewhere) */
  journalReplaying: boolean;
  /** the journal: its last write failed, so the clicks since are held in memory only (absent elsewhere) */
  journalDegraded?: boolean;
  /** the journal: clicks whose lines could not be written since start (absent elsewhere) */
  unjournaledClicks?: number;
}

/**
 * Where the redirect puts clicks, however they travel (click-ingest.ts chooses): the in-process queue
 * (memory-click-queue.ts), the same behind the journal (click-journal.ts) or the Redis stream
 * (redis-click-queue.ts).
 */
export interface ClickSink {
  /**
   * Never blocks and never throws; false when the sink is full or closed and the click was dropped (and counted).
   * Keeps no reference to `event`: what it keeps is copied before it returns (the fast path refills one record).
   */
  enqueue(event: ClickEvent): boolean;
  /**
   * Resolves once every click enqueued so far is durable (in the journal's file, in the Redis stream), or
   * null when nothing is pending (always, in memory alone). The redirect answers only after it, so an
   * answered redirect is a click that survives the process being killed.
   */
  settled(): Promise<void> | null;
  /** Writes everything enqueued so far; rejects if the database refuses (the clicks stay queued). */
  flush(): Promise<void>;
  /** Stops taking clicks and writes everything that is queued (SIGTERM: no click is lost). */
  close(): Promise<void>;
  status(): ClickSinkStatus;
}
