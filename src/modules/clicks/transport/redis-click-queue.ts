import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { closeRedis, logRedisConnection, whenRedisReady } from '../../../infra/redis.js';
import type { Appended, RedisTurn } from '../../../infra/redis-turn.js';
import type { ClickWriter } from '../rollups/click-writer.js';
import type { ClickSink } from './click-sink.js';
import { createClickStreamConsumer } from './click-stream-consumer.js';
import { CLICK_FIELD, clickStreamKeys, encodeClick, streamIdBefore, type KeyedClick } from './click-stream.js';
import { createDropCounter } from './dropped-clicks.js';
import { createMemoryClickQueue, type MemoryClickQueueOptions } from './memory-click-queue.js';
import { createStreamObserver, waitWritten } from './stream-observer.js';

/** The in-process queue's options (its fallback uses them as they are), and what the stream adds. */
export interface RedisClickQueueOptions extends MemoryClickQueueOptions {
  /** the shared client: the in-process consumer gets a connection of its own from it */
  redis: Redis;
  /** the redirect's Redis turn: every click is appended through it, and the stream observed on its connection */
  turn: RedisTurn;
  prefix: string;
  /** the replay-safe writer: used by the fallback queue and the in-process consumer */
  writer: ClickWriter;
  /** CLICK_QUEUE_LIMIT: the stream's backlog bound (clicks waiting, all instances together) */
  limit: number;
  claimIdleMs: number;
  /** CLICK_WORKER_IN_PROCESS: also consume the stream in this process */
  inProcessConsumer: boolean;
}

/**
 * The in-process fallback's own bound, under CLICK_QUEUE_LIMIT: the stream's default is sized for Redis memory
 * (millions of entries, config.ts), which the heap of one instance must not take on while Redis is away.
 */
const FALLBACK_LIMIT = 100_000;

/** flush() waits this long (plus CLICK_CLAIM_IDLE_MS, for a dead consumer's entries) for the consumers */
const FLUSH_WAIT_MS = 10_000;

/**
 * The click sink of the scale-out setup (REDIS_URL on PostgreSQL): every visit is one entry of the stream
 * `<prefix>clicks`, and the redirect answers only once Redis has it (`settled()`), so an instance killed after
 * answering loses no click. Consumers (click-stream-consumer.ts: `npm run worker`, or this process with
 * CLICK_WORKER_IN_PROCESS) write them.
 *
 * - One round trip per event-loop turn: the turn's clicks are appended in the redirect's Redis turn
 *   (infra/redis-turn.ts), one script run in the check phase, with the redirect limit's counts of the same
 *   turn; a fast-path visit's click is added there only if the count admits the visit.
 * - Bounded: beyond CLICK_QUEUE_LIMIT clicks waiting in the stream (stream-observer.ts, every second, plus
 *   what this instance added since), new clicks are dropped and counted, as in the in-process queue. XADD's
 *   `MAXLEN ~ 2×limit` is the hard memory bound for the moments when several instances' estimates are stale.
 * - Redis lost: an append that fails or times out (250 ms), or a connection that is not up, sends the click to
 *   an in-process fallback queue that writes it directly to the database; so redirects keep working and keep
 *   counting. Its clicks are lost only if this instance dies during the outage. A click whose append timed out
 *   but landed is written by both paths and counted once (its key).
 * - status() covers both paths; its lastFlushAt is the last batch any consumer committed, so every instance
 *   reports the cluster's flush lag. An outage is logged once when it starts and once when it ends.
 */
export async function createRedisClickQueue(opts: RedisClickQueueOptions): Promise<ClickSink> {
  const { log, limit, turn } = opts;
  const keys = clickStreamKeys(opts.prefix);
  const observer = createStreamObserver(turn.redis, keys, opts.flushMs);
  const fallback = createMemoryClickQueue({
    writer: opts.writer,
    flushMs: opts.flushMs,
    batchSize: opts.batchSize,
    limit: Math.min(limit, FALLBACK_LIMIT),
    log: log.child({ component: 'click-fallback' }),
    clock: opts.clock,
  });
  const consumer = inProcessConsumer(opts);
  await Promise.all([whenRedisReady(turn.redis), consumer && whenRedisReady(consumer.redis)]);
  await observer.observe();
  consumer?.start();
  turn.carryAppends();
  const outage = outageLog(log);
  const drops = backlogDrops(log, observer, limit);
  const inFlight = appendsInFlight();
  let closed = false;

  const toFallback = (click: KeyedClick, reason: unknown): boolean => {
    outage.fellBack(reason);
    return fallback.enqueue(click);
  };
  const append = appender({ opts, keys, observer, consumer, inFlight, outage, toFallback });

  return {
    enqueue(event) {
      if (closed || observer.backlog() + fallback.depth() >= limit) return drops.drop(closed);
      const click: KeyedClick = { ...event, key: randomUUID() };
      if (turn.redis.status !== 'ready') return toFallback(click, `redis connection ${turn.redis.status}`);
      append(click);
      return true;
    },
    settled: inFlight.settled,
    async flush() {
      await inFlight.latest();
      await fallback.flush();
      const last = inFlight.lastId();
      if (last !== null)
        await waitWritten(
          turn.redis,
          keys.stream,
          last,
          opts.claimIdleMs + FLUSH_WAIT_MS,
          () => consumer?.drain() ?? Promise.resolve(),
        );
      await observer.observe();
    },
    async close() {
      closed = true;
      await closeQueue({ observer, inFlight, fallback, consumer, log });
    },
    status: () => queueStatus({ observer, fallback, consumer, drops, outage }),
  };
}

/** The clicks dropped while the stream's backlog is at CLICK_QUEUE_LIMIT, counted and logged. */
const backlogDrops = (
  log: RedisClickQueueOptions['log'],
  observer: ReturnType<typeof createStreamObserver>,
  limit: number,
) =>
  createDropCounter(
    log,
    () => performance.now(),
    () => ({ backlog: observer.backlog(), limit }),
    'click stream backlog at CLICK_QUEUE_LIMIT: clicks dropped',
  );

type QueueParts = {
  observer: ReturnType<typeof createStreamObserver>;
  inFlight: ReturnType<typeof appendsInFlight>;
  fallback: ReturnType<typeof createMemoryClickQueue>;
  consumer: ReturnType<typeof inProcessConsumer>;
  log: RedisClickQueueOptions['log'];
  drops: ReturnType<typeof createDropCounter>;
  outage: ReturnType<typeof outageLog>;
};

/** A shutdown: the appends in flight and the fallback's clicks written, then the in-process consumer's last round. */
async function closeQueue(
  p: Pick<QueueParts, 'observer' | 'inFlight' | 'fallback' | 'consumer' | 'log'>,
): Promise<void> {
  const { observer, inFlight, fallback, consumer, log } = p;
  observer.stop();
  await inFlight.latest();
  await fallback.close();
  if (!consumer) return;
  try {
    await consumer.stop({ drain: true });
  } catch (err) {
    log.error(
      { err },
      'click stream: the last round before shutdown failed; its clicks stay in the stream for the next consumer',
    );
  }
  await closeRedis(consumer.redis);
}

/** Both paths' figures; lastFlushAt is the last batch any consumer committed (the cluster's flush lag). */
function queueStatus(p: Pick<QueueParts, 'observer' | 'fallback' | 'consumer' | 'drops' | 'outage'>) {
  const { observer, fallback, consumer, drops, outage } = p;
  const f = fallback.status();
  const times = [consumer?.lastWriteAt() ?? null, observer.lastWrite(), f.lastFlushAt].filter(
    (t): t is number => t !== null,
  );
  return {
    depth: observer.backlog() + f.depth,
    dropped: drops.count() + f.dropped,
    lastFlushAt: times.length ? Math.max(...times) : null,
    fellBack: outage.count(),
    stream: { backlog: observer.backlog(), consumers: observer.consumers() },
    journalReplaying: false,
  };
}

/**
 * A click appended in the redirect's Redis turn: counted in the backlog at once (uncounted if it is refused past
 * the limit), sent to the fallback queue if the append fails; the in-process consumer woken per full batch.
 */
function appender(p: {
  opts: RedisClickQueueOptions;
  keys: ReturnType<typeof clickStreamKeys>;
  observer: ReturnType<typeof createStreamObserver>;
  consumer: ReturnType<typeof inProcessConsumer>;
  inFlight: ReturnType<typeof appendsInFlight>;
  outage: ReturnType<typeof outageLog>;
  toFallback(click: KeyedClick, reason: unknown): boolean;
}): (click: KeyedClick) => void {
  const { opts, keys, observer, consumer, inFlight } = p;
  let sinceNotify = 0;
  return (click) => {
    observer.added(1);
    const done: Appended = (id, failure) => {
      inFlight.done();
      if (failure) {
        observer.added(-1);
        p.toFallback(click, failure);
      } else if (id === null)
        observer.added(-1); // past the limit: not added
      else {
        inFlight.landed(id);
        p.outage.back();
      }
    };
    opts.turn.append(keys.stream, 2 * opts.limit, CLICK_FIELD, encodeClick(click), done);
    inFlight.started(opts.turn.whenSent());
    if (consumer && ++sinceNotify >= opts.batchSize) {
      sinceNotify = 0;
      consumer.notify();
    }
  };
}

/** CLICK_WORKER_IN_PROCESS: a consumer of the stream in this process, on a connection of its own. */
function inProcessConsumer(opts: RedisClickQueueOptions) {
  if (!opts.inProcessConsumer) return null;
  const redis = opts.redis.duplicate({ enableOfflineQueue: false });
  logRedisConnection(redis, opts.log, 'click-consumer');
  const { prefix, writer, batchSize, flushMs, claimIdleMs, log, clock } = opts;
  const consumer = createClickStreamConsumer({ redis, prefix, writer, batchSize, flushMs, claimIdleMs, log, clock });
  return Object.assign(consumer, { redis });
}

/** The appends sent and not answered yet: settled() for the redirect, and the last entry id for flush(). */
function appendsInFlight() {
  let pending = 0;
  let latest: Promise<void> = Promise.resolve();
  let lastId: string | null = null;
  return {
    started(sent: Promise<void>): void {
      pending += 1;
      latest = sent;
    },
    done(): void {
      pending -= 1;
    },
    landed(id: string): void {
      if (lastId === null || streamIdBefore(lastId, id)) lastId = id;
    },
    settled: (): Promise<void> | null => (pending > 0 ? latest : null),
    latest: (): Promise<void> => latest,
    lastId: (): string | null => lastId,
  };
}

/** Clicks diverted to the fallback queue, and an outage logged once when it starts and once when it ends. */
function outageLog(log: FastifyBaseLogger) {
  let fellBack = 0;
  let inOutage = 0;
  let outage = false;
  return {
    fellBack(reason: unknown): void {
      fellBack += 1;
      inOutage += 1;
      if (outage) return;
      outage = true;
      log.warn(
        { reason: reason instanceof Error ? reason.message : String(reason) },
        'click stream unavailable: clicks go to the in-process fallback queue until it is back',
      );
    },
    back(): void {
      if (!outage) return;
      outage = false;
      log.info(
        { diverted: inOutage },
        "click stream available again: the outage's clicks were written by the fallback queue",
      );
      inOutage = 0;
    },
    count: (): number => fellBack,
  };
}
