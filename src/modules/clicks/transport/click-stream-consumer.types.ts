/** The click stream consumer's options and face, and the state its rounds share (click-stream-consumer.ts). */
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Clock } from '../../../lib/clock.js';
import type { ClickWriter } from '../rollups/click-writer.js';
import type { clickStreamKeys } from './click-stream.js';

export interface ClickStreamConsumerOptions {
  /** a connection of its own (its replies can be large; the API's commands must not queue behind them) */
  redis: Redis;
  prefix: string;
  /** the replay-safe writer (modules/clicks/replay-safe-click-writer.ts) */
  writer: ClickWriter;
  /** CLICK_BATCH_SIZE: entries read (and written in one transaction) at most at once */
  batchSize: number;
  /** CLICK_FLUSH_MS: the pause between rounds when the last round left the stream empty */
  flushMs: number;
  /** CLICK_CLAIM_IDLE_MS: entries another consumer has held unacknowledged this long are taken over */
  claimIdleMs: number;
  log: FastifyBaseLogger;
  clock: Clock;
}

export interface ClickStreamConsumer {
  readonly name: string;
  start(): void;
  /** Starts a round now instead of at the end of the pause (a full batch is waiting). */
  notify(): void;
  /** One round now, after the one in progress; rejects if it fails (the entries stay pending and are retried). */
  drain(): Promise<number>;
  /** clock time of the last committed batch, null before the first */
  lastWriteAt(): number | null;
  /** Stops after the batch in progress is written and acknowledged; `drain` adds one last full round. */
  stop(opts?: { drain?: boolean }): Promise<void>;
}

/** A consumer's mutable state: where its rounds stand, and whether it is stopping. */
export interface ConsumerState {
  groupReady: boolean;
  /** its own pending entries are read first (at start and after a failure) */
  ownPending: boolean;
  lastClaimAt: number;
  lastTrimAt: number;
  lastCleanupAt: number;
  lastWriteAt: number | null;
  failures: number;
  stopping: boolean;
  /** ends the pause between rounds */
  wake: (() => void) | null;
}

export interface Consumer {
  opts: ClickStreamConsumerOptions;
  keys: ReturnType<typeof clickStreamKeys>;
  name: string;
  claimEveryMs: number;
  state: ConsumerState;
}
