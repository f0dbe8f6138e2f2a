import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { CLICK_GROUP, clickGroupInfo, type clickStreamKeys, streamIdBefore } from './click-stream.js';

/** A consumer that has not touched the stream for this long does not count as alive. */
const CONSUMER_ALIVE_MS = 30_000;
const OBSERVE_EVERY_MS = 1_000;
/** a wait for the consumers polls this often */
const POLL_MS = 20;

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
 * The click stream as the producer sees it, every second, on the connection its appends go through (so an
 * observation counts exactly the appends sent before it): the group's backlog (pending + lag, or the stream's
 * length before any consumer ran), the consumers seen alive, and when any consumer last committed a batch.
 * Between observations the backlog is the last one plus what this process added since.
 */
export function createStreamObserver(redis: Redis, keys: ReturnType<typeof clickStreamKeys>, flushMs: number) {
  const liveWithinMs = Math.max(CONSUMER_ALIVE_MS, 5 * flushMs);
  let observed = 0;
  let added = 0;
  let addedAtObservation = 0;
  let consumers = 0;
  let sharedLastWrite: number | null = null;

  async function observe(): Promise<void> {
    if (redis.status !== 'ready') return;
    const at = added;
    try {
      const [info, length, lastWrite, alive] = await Promise.all([
        clickGroupInfo(redis, keys.stream),
        redis.xlen(keys.stream),
        redis.get(keys.lastWrite),
        liveConsumers(redis, keys.stream, liveWithinMs),
      ]);
      consumers = alive;
      const lag = info?.lag;
      // No group yet (no consumer ever ran), or a lag Redis cannot tell: the stream's length bounds it.
      observed = info && typeof lag === 'number' ? Number(info.pending) + lag : length;
      addedAtObservation = at;
      sharedLastWrite = lastWrite === null ? null : Number(lastWrite);
    } catch {
      // the next observation
    }
  }
  const timer = setInterval(() => void observe(), OBSERVE_EVERY_MS);
  timer.unref();

  return {
    observe,
    backlog: (): number => Math.max(0, observed + (added - addedAtObservation)),
    consumers: (): number => consumers,
    /** the last batch any consumer committed (a key in Redis): every instance reports the cluster's flush lag */
    lastWrite: (): number | null => sharedLastWrite,
    /** `n` clicks more (or fewer: an append that did not land) in the stream since the last observation */
    added(n: number): void {
      added += n;
    },
    stop: (): void => clearInterval(timer),
  };
}

/** Every click appended before `id` is written and acknowledged by some consumer. */
async function writtenUpTo(redis: Redis, stream: string, id: string): Promise<boolean> {
  const info = await clickGroupInfo(redis, stream);
  if (!info || streamIdBefore(String(info['last-delivered-id']), id)) return false;
  return ((await redis.xpending(stream, CLICK_GROUP, '-', id, 1)) as unknown[]).length === 0;
}

/**
 * Waits until the consumers have written every click up to stream entry `id`, or throws after `waitMs`. `nudge`
 * runs a round of this process's own consumer first, when it has one.
 */
export async function waitWritten(
  redis: Redis,
  stream: string,
  id: string,
  waitMs: number,
  nudge: () => Promise<unknown>,
): Promise<void> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    // A failed round (Redis restarted and lost the group: NOGROUP) is retried until the deadline; the
    // consumer recreates the group on its next round, and the deadline error says what is missing.
    await nudge().catch(() => 0);
    if (await writtenUpTo(redis, stream, id)) return;
    if (performance.now() > deadline) throw new Error(`clicks up to stream entry ${id} are not written yet`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
