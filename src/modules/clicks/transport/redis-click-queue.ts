import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { ClickWriter } from '../rollups/click-writer.js';
import { createMemoryClickQueue, type ClickCounter, type ClickQueue, type CounterReading, type MemoryClickQueueOptions } from './memory-click-queue.js';
import { createClickStreamConsumer } from './click-stream-consumer.js';
import { CLICK_FIELD, CLICK_GROUP, clickGroupInfo, clickStreamKeys, encodeClick, streamIdBefore, type KeyedClick } from './click-stream.js';
import { closeRedis, logRedisConnection, whenRedisReady } from '../../../infra/redis.js';

/** The in-process queue's options (its fallback uses them as they are), and what the stream adds. */
export interface RedisClickQueueOptions extends MemoryClickQueueOptions {
  /** the shared client: the producer (and the in-process consumer) get connections of their own from it */
  redis: Redis;
  prefix: string;
  /** the replay-safe writer: used by the fallback queue and the in-process consumer */
  writer: ClickWriter;
  /** CLICK_QUEUE_LIMIT: the stream's backlog bound (clicks waiting, all instances together) */
  limit: number;
  claimIdleMs: number;
  /** CLICK_WORKER_IN_PROCESS: also consume the stream in this process */
  inProcessConsumer: boolean;
}

/** The stream's figures for /readyz and /metrics, as last observed (every second). */
export interface ClickStreamStatus {
  /** clicks in the stream not yet written (pending + undelivered, all instances) */
  backlog: number;
  /** consumers of the group that read the stream recently */
  consumers: number;
}

/** A consumer that has not touched the stream for this long does not count as alive. */
const CONSUMER_ALIVE_MS = 30_000;

/** Consumers of the click group idle for less than `withinMs` (a consumer polls every CLICK_FLUSH_MS). */
async function liveConsumers(redis: Redis, stream: string, withinMs: number): Promise<number> {
  let consumers: unknown[][];
  try {
    consumers = (await redis.xinfo('CONSUMERS', stream, CLICK_GROUP)) as unknown[][];
  } catch {
    return 0; // no stream or no group yet
  }
  let alive = 0;
  for (const c of consumers) {
    for (let i = 0; i + 1 < c.length; i += 2) if (c[i] === 'idle' && Number(c[i + 1]) < withinMs) alive += 1;
  }
  return alive;
}

/**
 * A turn's counted clicks (enqueueCounted): each click's counter is counted (one INCRBY per counter for all
 * its clicks of the turn, the window's expiry set when the key is new, as in plugins/redirect-limit.ts; the
 * k-th click of a counter gets the increment's k-th value) and the click is XADDed when its count is within
 * its counter's limit. KEYS: the stream, then one counter per click; ARGV: MAXLEN, the field, then max,
 * window ms and payload per click. Returns count, ttl and the entry id ('' when not added) per click.
 */
const COUNTED_CLICKS_SCRIPT = `
local clicks = {}
for i = 2, #KEYS do clicks[KEYS[i]] = (clicks[KEYS[i]] or 0) + 1 end
local next = {}
local ttls = {}
local out = {}
for i = 2, #KEYS do
  local a = 3 + (i - 2) * 3
  local key = KEYS[i]
  if next[key] == nil then
    local n = clicks[key]
    local current = redis.call('INCRBY', key, n)
    local ttl = redis.call('PTTL', key)
    if current == n or ttl < 0 then
      redis.call('PEXPIRE', key, ARGV[a + 1])
      ttl = tonumber(ARGV[a + 1])
    end
    next[key] = current - n + 1
    ttls[key] = ttl
  end
  local count = next[key]
  next[key] = count + 1
  local id = ''
  if count <= tonumber(ARGV[a]) then
    id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', ARGV[2], ARGV[a + 2])
  end
  out[#out + 1] = count
  out[#out + 1] = ttls[key]
  out[#out + 1] = id
end
return out
`;

type CountedClicksCommand = (numKeys: number, ...args: Array<string | number>) => Promise<Array<number | string>>;

interface CountedClick {
  click: KeyedClick;
  counter: ClickCounter;
  resolve(reading: CounterReading | null): void;
}

/** An XADD unanswered this long counts as failed and the click goes to the fallback queue. */
const XADD_TIMEOUT_MS = 250;
const OBSERVE_EVERY_MS = 1_000;
const WARNING_INTERVAL_MS = 10_000;
/** flush() waits this long (plus CLICK_CLAIM_IDLE_MS, for a dead consumer's entries) for the consumers */
const FLUSH_WAIT_MS = 10_000;

/**
 * The click queue of the scale-out setup (REDIS_URL on PostgreSQL): every visit is one XADD to the stream
 * `<prefix>clicks`, and the redirect answers only once Redis has it (`settled()`, awaited in links.module.ts),
 * so an instance killed after answering loses no click. Consumers (click-stream-consumer.ts: `npm run
 * worker`, or this process with CLICK_WORKER_IN_PROCESS) write them.
 *
 * - Bounded: beyond CLICK_QUEUE_LIMIT clicks waiting in the stream (the consumer group's pending + lag, read
 *   every second on the producer's own connection, plus what this instance added since), new clicks are
 *   dropped and counted, as in the in-process queue. XADD's `MAXLEN ~ 2×limit` is the hard memory bound
 *   for the moments when several instances' estimates are stale at once.
 * - Redis lost: an XADD that fails or times out (250 ms), or a producer connection that is not up, sends
 *   the click to an in-process fallback queue that writes it directly to the database; so redirects keep
 *   working and keep counting. Its clicks are lost only if this instance dies during the outage. A click
 *   whose XADD timed out but landed is written by both paths and counted once (its key).
 * - One pipeline per event-loop turn: the turn's clicks are sent as one XADD pipeline (one write, one
 *   round trip) in the check phase, and the turn's redirects are answered when it returns (`settled()`).
 *   The redirect's fast path sends its clicks with their rate-limit counts instead (`enqueueCounted`): one
 *   script run per turn counts each visit and adds the click only if the visit is within the limit, so the
 *   answer waits for one round trip, not the limit's and then the XADD's.
 * - depth(), dropped(), lastFlushAt() cover both paths; lastFlushAt() is the last batch any consumer
 *   committed (a key in Redis), so every instance reports the cluster's flush lag. stream() tells the
 *   backlog and the consumers seen alive (/readyz, /metrics); fellBack() counts the clicks diverted to the
 *   fallback. An outage is logged once when it starts and once when the stream takes clicks again.
 */
export async function createRedisClickQueue(
  opts: RedisClickQueueOptions,
): Promise<ClickQueue & Required<Pick<ClickQueue, 'settled' | 'enqueueCounted' | 'fellBack' | 'stream'>>> {
  const { writer, log, clock, limit } = opts;
  const keys = clickStreamKeys(opts.prefix);
  const liveWithinMs = Math.max(CONSUMER_ALIVE_MS, 5 * opts.flushMs);
  const producer = opts.redis.duplicate({ enableOfflineQueue: false, enableAutoPipelining: true, commandTimeout: XADD_TIMEOUT_MS });
  logRedisConnection(producer, log, 'click-producer');
  producer.defineCommand('ferryCountedClicks', { lua: COUNTED_CLICKS_SCRIPT });
  const countedClicks = (producer as unknown as { ferryCountedClicks: CountedClicksCommand }).ferryCountedClicks.bind(producer);
  const consumerConnection = opts.inProcessConsumer ? opts.redis.duplicate({ enableOfflineQueue: false }) : null;
  if (consumerConnection) logRedisConnection(consumerConnection, log, 'click-consumer');
  const consumer = consumerConnection
    ? createClickStreamConsumer({ redis: consumerConnection, prefix: opts.prefix, writer, batchSize: opts.batchSize, flushMs: opts.flushMs, claimIdleMs: opts.claimIdleMs, log, clock })
    : null;
  const fallback = createMemoryClickQueue({ writer, flushMs: opts.flushMs, batchSize: opts.batchSize, limit, log: log.child({ component: 'click-fallback' }), clock });

  let observed = 0;
  let added = 0;
  let addedAtObservation = 0;
  let sharedLastWrite: number | null = null;
  let dropped = 0;
  let fellBack = 0;
  let lastDropWarning = Number.NEGATIVE_INFINITY;
  let outage = false;
  let fellBackInOutage = 0;
  let consumersAlive = 0;
  let lastId: string | null = null;
  let latest: Promise<void> = Promise.resolve();
  let inFlight = 0;
  let sinceNotify = 0;
  /** the clicks of this turn, sent as one pipeline in the check phase */
  let turn: KeyedClick[] = [];
  /** the counted clicks of this turn (enqueueCounted), sent as one script run beside the pipeline */
  let countedTurn: CountedClick[] = [];
  let turnDone: Promise<void> | null = null;
  let closed = false;

  const backlog = (): number => Math.max(0, observed + (added - addedAtObservation));

  /** The group's backlog, on the producer's connection: it counts exactly the XADDs sent before it. */
  async function observe(): Promise<void> {
    if (producer.status !== 'ready') return;
    const at = added;
    try {
      const [info, length, lastWrite, alive] = await Promise.all([
        clickGroupInfo(producer, keys.stream), producer.xlen(keys.stream), producer.get(keys.lastWrite), liveConsumers(producer, keys.stream, liveWithinMs),
      ]);
      consumersAlive = alive;
      const lag = info?.lag;
      // No group yet (no consumer ever ran), or a lag Redis cannot tell: the stream's length bounds it.
      observed = info && typeof lag === 'number' ? Number(info.pending) + lag : length;
      addedAtObservation = at;
      sharedLastWrite = lastWrite === null ? null : Number(lastWrite);
    } catch {
      // the next observation
    }
  }
  await Promise.all([whenRedisReady(producer), consumerConnection && whenRedisReady(consumerConnection)]);
  await observe();
  const observer = setInterval(() => void observe(), OBSERVE_EVERY_MS);
  observer.unref();
  consumer?.start();

  const toFallback = (click: KeyedClick, reason: unknown): boolean => {
    fellBack += 1;
    fellBackInOutage += 1;
    if (!outage) {
      outage = true;
      log.warn({ reason: reason instanceof Error ? reason.message : String(reason) }, 'click stream unavailable: clicks go to the in-process fallback queue until it is back');
    }
    return fallback.enqueue(click);
  };

  const streamBack = (): void => {
    if (!outage) return;
    outage = false;
    log.info({ diverted: fellBackInOutage }, 'click stream available again: the outage\'s clicks were written by the fallback queue');
    fellBackInOutage = 0;
  };

  /** A click's entry id, or a failure: the click goes to the fallback queue. */
  const landed = (click: KeyedClick, id: unknown, failure: unknown): void => {
    if (failure || typeof id !== 'string') {
      added -= 1;
      toFallback(click, failure ?? 'no stream id');
      return;
    }
    if (lastId === null || streamIdBefore(lastId, id)) lastId = id;
    streamBack();
  };

  /** The turn's counted clicks as one script run: a click past its counter's limit is not added. */
  const sendCounted = (counted: CountedClick[]): Promise<void> => {
    if (counted.length === 0) return Promise.resolve();
    const args: Array<string | number> = [keys.stream];
    for (const c of counted) args.push(c.counter.key);
    args.push(2 * limit, CLICK_FIELD);
    for (const c of counted) args.push(c.counter.max, c.counter.windowMs, encodeClick(c.click));
    const settle = (out: Array<number | string> | null, err?: unknown): void => {
      inFlight -= counted.length;
      counted.forEach((c, i) => {
        if (out === null) {
          landed(c.click, null, err ?? new Error('no reply')); // fails open: the click is admitted
          return c.resolve(null);
        }
        const id = out[3 * i + 2];
        if (id === '') added -= 1; // past the limit: not added
        else landed(c.click, id, null);
        c.resolve({ count: Number(out[3 * i]), ttlMs: Number(out[3 * i + 1]) });
      });
    };
    return countedClicks(1 + counted.length, ...args).then(
      (out) => settle(Array.isArray(out) && out.length === 3 * counted.length ? out : null, new Error('unexpected reply')),
      (err: unknown) => settle(null, err),
    );
  };

  /** Sends the turn's clicks as one pipeline (and its counted clicks as one script run); a click whose XADD fails goes to the fallback. */
  const sendTurn = (): Promise<void> => {
    const clicks = turn;
    const counted = countedTurn;
    turn = [];
    countedTurn = [];
    turnDone = null;
    const countedSent = sendCounted(counted);
    if (clicks.length === 0) return countedSent;
    const pipeline = producer.pipeline();
    for (const click of clicks) pipeline.xadd(keys.stream, 'MAXLEN', '~', 2 * limit, '*', CLICK_FIELD, encodeClick(click));
    const settle = (results: Array<[Error | null, unknown]> | null, err?: unknown): void => {
      inFlight -= clicks.length;
      clicks.forEach((click, i) => {
        const [failure, id] = results?.[i] ?? [err ?? new Error('no reply'), null];
        landed(click, id, failure);
      });
    };
    const piped = pipeline.exec().then(
      (results) => settle(results as Array<[Error | null, unknown]> | null),
      (err: unknown) => settle(null, err),
    );
    return Promise.all([piped, countedSent]).then(() => undefined);
  };

  /** Opens the turn on its first click: sent in the check phase, after this turn's requests. */
  const joinTurn = (): void => {
    if (turnDone === null) {
      turnDone = new Promise<void>((resolve) => setImmediate(() => void sendTurn().then(resolve)));
      latest = turnDone;
    }
    if (consumer && ++sinceNotify >= opts.batchSize) {
      sinceNotify = 0;
      consumer.notify();
    }
  };

  const drop = (): false => {
    dropped += 1;
    const now = performance.now();
    if (now - lastDropWarning >= WARNING_INTERVAL_MS) {
      lastDropWarning = now;
      log.warn({ dropped, backlog: backlog(), limit }, closed ? 'click after shutdown dropped' : 'click stream backlog at CLICK_QUEUE_LIMIT: clicks dropped');
    }
    return false;
  };

  /** Every click XADDed before `id` is written and acknowledged by some consumer. */
  async function writtenUpTo(id: string): Promise<boolean> {
    const info = await clickGroupInfo(producer, keys.stream);
    if (!info || streamIdBefore(String(info['last-delivered-id']), id)) return false;
    return ((await producer.xpending(keys.stream, CLICK_GROUP, '-', id, 1)) as unknown[]).length === 0;
  }

  async function waitWritten(id: string): Promise<void> {
    const deadline = performance.now() + opts.claimIdleMs + FLUSH_WAIT_MS;
    for (;;) {
      // A failed round (Redis restarted and lost the group: NOGROUP) is retried until the deadline; the
      // consumer recreates the group on its next round, and the deadline error says what is missing.
      if (consumer) await consumer.drain().catch(() => 0);
      if (await writtenUpTo(id)) return;
      if (performance.now() > deadline) throw new Error(`clicks up to stream entry ${id} are not written yet`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  return {
    enqueue(event) {
      if (closed || backlog() + fallback.depth() >= limit) return drop();
      const click: KeyedClick = { ...event, key: randomUUID() };
      if (producer.status !== 'ready') return toFallback(click, `redis connection ${producer.status}`);
      added += 1;
      inFlight += 1;
      turn.push(click);
      joinTurn();
      return true;
    },
    enqueueCounted(event, counter) {
      if (closed || backlog() + fallback.depth() >= limit || producer.status !== 'ready') return null;
      added += 1;
      inFlight += 1;
      return new Promise<CounterReading | null>((resolve) => {
        countedTurn.push({ click: { ...event, key: randomUUID() }, counter, resolve });
        joinTurn();
      });
    },
    settled: () => (inFlight > 0 ? latest : null),
    fellBack: () => fellBack,
    stream: () => ({ backlog: backlog(), consumers: consumersAlive }),
    depth: () => backlog() + fallback.depth(),
    dropped: () => dropped + fallback.dropped(),
    lastFlushAt() {
      const times = [consumer?.lastWriteAt() ?? null, sharedLastWrite, fallback.lastFlushAt()].filter((t): t is number => t !== null);
      return times.length ? Math.max(...times) : null;
    },
    async flush() {
      await latest;
      await fallback.flush();
      if (lastId !== null) await waitWritten(lastId);
      await observe();
    },
    async close() {
      closed = true;
      clearInterval(observer);
      await latest;
      await fallback.close();
      try {
        await consumer?.stop({ drain: true });
      } catch (err) {
        log.error({ err }, 'click stream: the last round before shutdown failed; its clicks stay in the stream for the next consumer');
      }
      await Promise.all([closeRedis(producer), consumerConnection && closeRedis(consumerConnection)]);
    },
  };
}
