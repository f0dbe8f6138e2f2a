import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type {
  ClickStreamConsumer,
  ClickStreamConsumerOptions,
  Consumer,
  ConsumerState,
} from './click-stream-consumer.types.js';
import {
  CLICK_GROUP,
  clickGroupInfo,
  clickStreamKeys,
  decodeClick,
  ensureClickGroup,
  type KeyedClick,
} from './click-stream.js';

export type { ClickStreamConsumer, ClickStreamConsumerOptions } from './click-stream-consumer.types.js';

type Entry = [id: string, fields: string[] | null];
type ReadReply = Array<[stream: string, entries: Entry[]]> | null;

const TRIM_EVERY_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;
const IDLE_CONSUMER_MS = 24 * 3_600_000;

async function writeAndAck(c: Consumer, entries: Entry[]): Promise<number> {
  if (entries.length === 0) return 0;
  const { redis, writer, log, clock } = c.opts;
  const events: KeyedClick[] = [];
  let malformed = 0;
  for (const [, fields] of entries) {
    // null fields: an entry still pending whose content was trimmed away (nothing left to write)
    const click = fields ? decodeClick(fields) : null;
    if (click) events.push(click);
    else malformed += 1;
  }
  if (malformed > 0)
    log.error(
      { malformed, first: entries[0]![0] },
      'click-stream entries that are not clicks acknowledged without writing',
    );
  if (events.length > 0) await writer.write(events);
  await redis.xack(c.keys.stream, CLICK_GROUP, ...entries.map(([id]) => id));
  if (events.length > 0) {
    c.state.lastWriteAt = clock.now();
    await redis.set(c.keys.lastWrite, String(c.state.lastWriteAt));
  }
  return entries.length;
}

const entriesOf = (reply: ReadReply): Entry[] => reply?.[0]?.[1] ?? [];
const read = async (c: Consumer, from: '0' | '>'): Promise<Entry[]> =>
  entriesOf(
    (await c.opts.redis.xreadgroup(
      'GROUP',
      CLICK_GROUP,
      c.name,
      'COUNT',
      c.opts.batchSize,
      'STREAMS',
      c.keys.stream,
      from,
    )) as ReadReply,
  );

async function ownPendingRound(c: Consumer): Promise<number> {
  let n = 0;
  for (let entries = await read(c, '0'); entries.length > 0; entries = await read(c, '0'))
    n += await writeAndAck(c, entries);
  return n;
}

async function claimRound(c: Consumer): Promise<number> {
  const { redis, claimIdleMs, batchSize, log } = c.opts;
  let n = 0;
  let start = '0-0';
  do {
    const [next, entries] = (await redis.xautoclaim(
      c.keys.stream,
      CLICK_GROUP,
      c.name,
      claimIdleMs,
      start,
      'COUNT',
      batchSize,
    )) as [string, Entry[]];
    if (entries.length > 0)
      log.warn(
        { claimed: entries.length, consumer: c.name },
        'claimed click-stream entries another consumer left unacknowledged',
      );
    n += await writeAndAck(c, entries);
    start = next;
  } while (start !== '0-0');
  return n;
}

/**
 * Every restart leaves a consumer name behind in the group; names idle for a day with nothing pending are
 * removed (a live one that was merely idle is recreated by its next read).
 */
async function forgetIdleConsumers(c: Consumer): Promise<void> {
  const { redis } = c.opts;
  const consumers = (await redis.xinfo('CONSUMERS', c.keys.stream, CLICK_GROUP)) as unknown[][];
  for (const row of consumers) {
    const info: Record<string, unknown> = {};
    for (let i = 0; i + 1 < row.length; i += 2) info[String(row[i])] = row[i + 1];
    if (info.name !== c.name && info.pending === 0 && Number(info.idle) > IDLE_CONSUMER_MS)
      await redis.xgroup('DELCONSUMER', c.keys.stream, CLICK_GROUP, String(info.name));
  }
}

async function newEntriesRound(c: Consumer): Promise<number> {
  let n = 0;
  for (;;) {
    const entries = await read(c, '>');
    n += await writeAndAck(c, entries);
    if (entries.length < c.opts.batchSize || c.state.stopping) return n;
  }
}

/** Everything before the oldest entry still pending (or not yet delivered) is written: drop it. */
async function trim(c: Consumer): Promise<void> {
  const { redis } = c.opts;
  const info = await clickGroupInfo(redis, c.keys.stream);
  if (!info) return;
  const [count, oldest] = (await redis.xpending(c.keys.stream, CLICK_GROUP)) as [number, string | null];
  const minId = count > 0 && oldest ? oldest : String(info['last-delivered-id']);
  await redis.xtrim(c.keys.stream, 'MINID', '~', minId);
}

/** One round (steps 1 to 4 above); the number of entries it wrote and acknowledged. */
async function round(c: Consumer): Promise<number> {
  const { state } = c;
  if (!state.groupReady) {
    await ensureClickGroup(c.opts.redis, c.keys.stream);
    state.groupReady = true;
  }
  let n = 0;
  if (state.ownPending) {
    n += await ownPendingRound(c);
    state.ownPending = false;
  }
  if (performance.now() - state.lastClaimAt >= c.claimEveryMs) {
    state.lastClaimAt = performance.now();
    n += await claimRound(c);
    if (performance.now() - state.lastCleanupAt >= IDLE_CONSUMER_MS / 24) {
      state.lastCleanupAt = performance.now();
      await forgetIdleConsumers(c);
    }
  }
  n += await newEntriesRound(c);
  if (n > 0 && performance.now() - state.lastTrimAt >= TRIM_EVERY_MS) {
    state.lastTrimAt = performance.now();
    await trim(c);
  }
  return n;
}

/** Waits `ms`, or until `state.wake()` is called. */
const pause = (state: ConsumerState, ms: number): Promise<void> =>
  new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      state.wake = null;
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    state.wake = done;
  });

/** Rounds until stopped, `flushMs` apart, backing off after failures. */
async function run(c: Consumer, guardedRound: () => Promise<number>): Promise<void> {
  const { state, opts } = c;
  while (!state.stopping) {
    let wait = opts.flushMs;
    try {
      await guardedRound();
    } catch (err) {
      wait = Math.min(MAX_BACKOFF_MS, Math.max(opts.flushMs, 100 * 2 ** state.failures));
      opts.log.error(
        { err, failures: state.failures, retryInMs: wait },
        'click stream: a round failed; its entries stay pending and are retried',
      );
    }
    if (!state.stopping) await pause(state, wait);
  }
}

/**
 * The consumer's rounds, one at a time (the loop, flush() and stop() all go through here); a failed round
 * counts towards the back-off and has the next round read this consumer's pending entries first.
 */
function guardedRounds(c: Consumer): () => Promise<number> {
  const { state } = c;
  let busy: Promise<unknown> = Promise.resolve();

  /** One round at a time (the loop, flush() and stop() all go through here). */
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = busy.then(fn, fn);
    busy = run.catch(() => undefined);
    return run;
  };

  return (): Promise<number> =>
    exclusive(async () => {
      try {
        const n = await round(c);
        state.failures = 0;
        return n;
      } catch (err) {
        state.failures += 1;
        state.ownPending = true; // what was read and not acknowledged is read again from our pending list
        if (/NOGROUP/.test(String((err as Error).message))) state.groupReady = false; // Redis lost the stream (restart)
        throw err;
      }
    });
}

/**
 * Reads the click stream as one consumer of the group and writes what it reads: a batch of at most
 * `batchSize` entries is written (records, counters and rollups in one transaction per part of it, on PostgreSQL
 * two: rollups/pg-click-parts.ts) and then acknowledged (XACK). A round:
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
  const never = Number.NEGATIVE_INFINITY;
  const state: ConsumerState = {
    groupReady: false,
    ownPending: true,
    lastClaimAt: never,
    lastTrimAt: never,
    lastCleanupAt: never,
    lastWriteAt: null,
    failures: 0,
    stopping: false,
    wake: null,
  };
  const c: Consumer = {
    opts,
    keys: clickStreamKeys(opts.prefix),
    name: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    claimEveryMs: Math.max(250, opts.claimIdleMs / 2),
    state,
  };
  let loop: Promise<void> | null = null;
  const guardedRound = guardedRounds(c);

  return {
    name: c.name,
    start() {
      loop ??= run(c, guardedRound);
    },
    notify: () => state.wake?.(),
    drain: guardedRound,
    lastWriteAt: () => state.lastWriteAt,
    async stop(o = {}) {
      state.stopping = true;
      state.wake?.();
      await loop;
      if (o.drain) {
        state.stopping = false; // one full round: read until a short batch
        try {
          await guardedRound();
        } finally {
          state.stopping = true;
        }
      }
    },
  };
}
