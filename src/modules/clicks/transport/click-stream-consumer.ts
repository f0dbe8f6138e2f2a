import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Clock } from '../../../lib/clock.js';
import type { ClickWriter } from '../rollups/click-writer.js';
import { CLICK_GROUP, clickGroupInfo, clickStreamKeys, decodeClick, ensureClickGroup, type KeyedClick } from './click-stream.js';

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

type Entry = [id: string, fields: string[] | null];
type ReadReply = Array<[stream: string, entries: Entry[]]> | null;

const TRIM_EVERY_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;
const IDLE_CONSUMER_MS = 24 * 3_600_000;

/**
 * Reads the click stream as one consumer of the group and writes what it reads: a batch of at most
 * `batchSize` entries is written in ONE transaction (records, counters, rollups) and then acknowledged
 * (XACK). A round:
 *
 * 1. after a failure (and at start): this consumer's own pending entries first — read, not acknowledged;
 * 2. every claimIdleMs/2: XAUTOCLAIM of entries idle for claimIdleMs in any consumer's pending list (a
 *    worker killed mid-batch): they become ours and are written;
 * 3. new entries, batch after batch, until a batch comes back short;
 * 4. at most once a second, XTRIM MINID to the oldest entry still pending or undelivered, so the stream holds
 *    the backlog and not the history.
 *
 * Between rounds it waits `flushMs`, so a click waits at most about CLICK_FLUSH_MS, as in the in-process
 * queue, and a busy stream is read back to back. A replay (1 or 2 after a commit whose XACK never happened)
 * is harmless: the writer skips keys already recorded. Failures back off up to 10 s and retry forever: a
 * database or Redis outage delays clicks, it does not lose them.
 */
export function createClickStreamConsumer(opts: ClickStreamConsumerOptions): ClickStreamConsumer {
  const { redis, writer, batchSize, log, clock } = opts;
  const keys = clickStreamKeys(opts.prefix);
  const name = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const claimEveryMs = Math.max(250, opts.claimIdleMs / 2);
  let groupReady = false;
  let ownPending = true;
  let lastClaimAt = Number.NEGATIVE_INFINITY;
  let lastTrimAt = Number.NEGATIVE_INFINITY;
  let lastCleanupAt = Number.NEGATIVE_INFINITY;
  let lastWriteAt: number | null = null;
  let failures = 0;
  let stopping = false;
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  let busy: Promise<unknown> = Promise.resolve();

  /** One round at a time (the loop, flush() and stop() all go through here). */
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = busy.then(fn, fn);
    busy = run.catch(() => undefined);
    return run;
  };

  async function writeAndAck(entries: Entry[]): Promise<number> {
    if (entries.length === 0) return 0;
    const events: KeyedClick[] = [];
    let malformed = 0;
    for (const [, fields] of entries) {
      // null fields: an entry still pending whose content was trimmed away (nothing left to write)
      const click = fields ? decodeClick(fields) : null;
      if (click) events.push(click);
      else malformed += 1;
    }
    if (malformed > 0) log.error({ malformed, first: entries[0]![0] }, 'click-stream entries that are not clicks acknowledged without writing');
    if (events.length > 0) await writer.write(events);
    await redis.xack(keys.stream, CLICK_GROUP, ...entries.map(([id]) => id));
    if (events.length > 0) {
      lastWriteAt = clock.now();
      await redis.set(keys.lastWrite, String(lastWriteAt));
    }
    return entries.length;
  }

  const entriesOf = (reply: ReadReply): Entry[] => reply?.[0]?.[1] ?? [];
  const read = async (from: '0' | '>'): Promise<Entry[]> =>
    entriesOf((await redis.xreadgroup('GROUP', CLICK_GROUP, name, 'COUNT', batchSize, 'STREAMS', keys.stream, from)) as ReadReply);

  async function ownPendingRound(): Promise<number> {
    let n = 0;
    for (let entries = await read('0'); entries.length > 0; entries = await read('0')) n += await writeAndAck(entries);
    return n;
  }

  async function claimRound(): Promise<number> {
    let n = 0;
    let start = '0-0';
    do {
      const [next, entries] = (await redis.xautoclaim(keys.stream, CLICK_GROUP, name, opts.claimIdleMs, start, 'COUNT', batchSize)) as [string, Entry[]];
      if (entries.length > 0) log.warn({ claimed: entries.length, consumer: name }, 'claimed click-stream entries another consumer left unacknowledged');
      n += await writeAndAck(entries);
      start = next;
    } while (start !== '0-0');
    return n;
  }

  /**
   * Every restart leaves a consumer name behind in the group; names idle for a day with nothing pending are
   * removed (a live one that was merely idle is recreated by its next read).
   */
  async function forgetIdleConsumers(): Promise<void> {
    const consumers = (await redis.xinfo('CONSUMERS', keys.stream, CLICK_GROUP)) as unknown[][];
    for (const c of consumers) {
      const info: Record<string, unknown> = {};
      for (let i = 0; i + 1 < c.length; i += 2) info[String(c[i])] = c[i + 1];
      if (info.name !== name && info.pending === 0 && Number(info.idle) > IDLE_CONSUMER_MS) await redis.xgroup('DELCONSUMER', keys.stream, CLICK_GROUP, String(info.name));
    }
  }

  async function newEntriesRound(): Promise<number> {
    let n = 0;
    for (;;) {
      const entries = await read('>');
      n += await writeAndAck(entries);
      if (entries.length < batchSize || stopping) return n;
    }
  }

  /** Everything before the oldest entry still pending (or not yet delivered) is written: drop it. */
  async function trim(): Promise<void> {
    const info = await clickGroupInfo(redis, keys.stream);
    if (!info) return;
    const [count, oldest] = (await redis.xpending(keys.stream, CLICK_GROUP)) as [number, string | null];
    const minId = count > 0 && oldest ? oldest : String(info['last-delivered-id']);
    await redis.xtrim(keys.stream, 'MINID', '~', minId);
  }

  async function round(): Promise<number> {
    if (!groupReady) {
      await ensureClickGroup(redis, keys.stream);
      groupReady = true;
    }
    let n = 0;
    if (ownPending) {
      n += await ownPendingRound();
      ownPending = false;
    }
    if (performance.now() - lastClaimAt >= claimEveryMs) {
      lastClaimAt = performance.now();
      n += await claimRound();
      if (performance.now() - lastCleanupAt >= IDLE_CONSUMER_MS / 24) {
        lastCleanupAt = performance.now();
        await forgetIdleConsumers();
      }
    }
    n += await newEntriesRound();
    if (n > 0 && performance.now() - lastTrimAt >= TRIM_EVERY_MS) {
      lastTrimAt = performance.now();
      await trim();
    }
    return n;
  }

  const guardedRound = (): Promise<number> =>
    exclusive(async () => {
      try {
        const n = await round();
        failures = 0;
        return n;
      } catch (err) {
        failures += 1;
        ownPending = true; // what was read and not acknowledged is read again from our pending list
        if (/NOGROUP/.test(String((err as Error).message))) groupReady = false; // Redis lost the stream (restart)
        throw err;
      }
    });

  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      wake = done;
    });

  async function run(): Promise<void> {
    while (!stopping) {
      let wait = opts.flushMs;
      try {
        await guardedRound();
      } catch (err) {
        wait = Math.min(MAX_BACKOFF_MS, Math.max(opts.flushMs, 100 * 2 ** failures));
        log.error({ err, failures, retryInMs: wait }, 'click stream: a round failed; its entries stay pending and are retried');
      }
      if (!stopping) await pause(wait);
    }
  }

  return {
    name,
    start() {
      loop ??= run();
    },
    notify: () => wake?.(),
    drain: guardedRound,
    lastWriteAt: () => lastWriteAt,
    async stop(o = {}) {
      stopping = true;
      wake?.();
      await loop;
      if (o.drain) {
        stopping = false; // one full round: read until a short batch
        try {
          await guardedRound();
        } finally {
          stopping = true;
        }
      }
    },
  };
}
