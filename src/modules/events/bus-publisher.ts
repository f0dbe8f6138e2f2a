import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { openEventsCursor, storedPosition, type EventsCursor, type StoredEvent } from '../../db/events.js';
import type { Database } from '../../db/types.js';
import { BusDownError, type BusMessage, type EventBus } from '../../infra/event-bus.js';
import type { Clock } from '../../lib/clock.js';

/** The publisher's row in `events_bus_positions` (migration 049). */
const POSITION = 'bus';
/** Events published per confirmation (and per move of the stored position). */
export const EVENTS_PER_BATCH = 500;
/** How often new events are looked for when nothing wakes the publisher. */
const POLL_MS = 250;
/** How long one run of the `events-bus` job publishes before it lets its lease go (another instance may take it). */
const SLICE_MS = 30_000;

export interface BusPublisherDeps {
  db: Kysely<Database>;
  bus: Pick<EventBus, 'up' | 'publish'>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** the engine commits ids out of order (PostgreSQL): the cursor watches for late commits */
  lateCommits: boolean;
  /** the bus confirmed these (metrics) */
  onPublished?: (events: readonly StoredEvent[]) => void;
  pollMs?: number;
  sliceMs?: number;
}

class PositionMoved extends Error {}

const messageOf = (e: StoredEvent): BusMessage => ({
  id: e.event.id,
  type: e.event.type,
  body: JSON.stringify(e.event),
});

/** The stored position; at the first start, the events' end (events written before the bus was set are not sent). */
const busPosition = (db: Kysely<Database>, now: number): Promise<number> =>
  storedPosition(db, 'events_bus_positions', POSITION, (end) => ({ published: end, updated_at: now }));

/**
 * Moves the position from `from` to `to` and records how far publishing got; PositionMoved when the position was
 * not at `from` (another publisher moved it).
 */
async function movePosition(
  db: Kysely<Database>,
  from: number,
  to: { position: number; published: number },
  now: number,
): Promise<void> {
  const moved = await db
    .updateTable('events_bus_positions')
    .set({ position: to.position, published: to.published, updated_at: now })
    .where('name', '=', POSITION)
    .where('position', '=', from)
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) !== 1) throw new PositionMoved();
}

/** Seconds since the oldest event past what was published was written (0: none waiting, or no position yet). */
async function oldestUnpublishedSeconds(db: Kysely<Database>, now: number): Promise<number> {
  const row = await db
    .selectFrom('events_bus_positions')
    .select('published')
    .where('name', '=', POSITION)
    .executeTakeFirst();
  if (!row) return 0;
  const oldest = await db
    .selectFrom('events')
    .select('created_at')
    .where('id', '>', Number(row.published))
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return oldest ? Math.max(0, (now - Number(oldest.created_at)) / 1000) : 0;
}

/** A wait of `ms` that wake() or the signal ends early; a wake() while nobody waits ends the next wait at once. */
function createPause() {
  let wakeUp: (() => void) | null = null;
  let woken = false;
  return {
    wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
      if (woken) {
        woken = false;
        return Promise.resolve();
      }
      // An abort that came during the batch (the instance stopping) fires no listener added after it.
      if (signal?.aborted) return Promise.resolve();
      return new Promise((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          signal?.removeEventListener('abort', done);
          wakeUp = null;
          resolve();
        };
        const t = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        wakeUp = done;
      });
    },
    wake(): void {
      if (wakeUp) wakeUp();
      else woken = true;
    },
  };
}

/**
 * Publishes the `events` table to the bus (SPEC §22), at least once and in commit order: events are read from the
 * stored position with openEventsCursor (in id order, late commits as they come), published a batch at a time,
 * and the position moves only once the bus confirmed the batch, to the cursor's `settled` place (below any id it
 * still waits for), so an event is never skipped by a restart. A publisher that dies, or a bus that fails a
 * batch, leaves the position where the batch is read and published again. One publisher at a time among the
 * instances: each run of the `events-bus` job (job-runner.ts's leases) publishes for a slice, and the position
 * only moves from where this publisher found it.
 */
export function createBusPublisher(deps: BusPublisherDeps) {
  const { db, bus, clock, log } = deps;
  const pause = createPause();
  let cursor: EventsCursor | null = null;
  /** the stored position this process's cursor goes on from */
  let mine = -1;

  /** One batch: read, published, confirmed, the position moved. The number of events published. */
  async function turn(): Promise<number> {
    const from = await busPosition(db, clock.now());
    if (!cursor || mine !== from) {
      cursor = await openEventsCursor(db, { after: from }, { lateCommits: deps.lateCommits });
      mine = from;
    }
    const events = await cursor.read(EVENTS_PER_BATCH);
    if (events.length) await bus.publish(events.map(messageOf));
    const to = Math.max(from, cursor.settled);
    if (to !== from || events.length)
      await movePosition(db, from, { position: to, published: cursor.last }, clock.now());
    mine = to;
    if (events.length) deps.onPublished?.(events);
    return events.length;
  }

  /** One run of the job: publishes for a slice while the bus is up; the number of events published. */
  async function slice(signal?: AbortSignal): Promise<number> {
    const end = performance.now() + (deps.sliceMs ?? SLICE_MS);
    let published = 0;
    // First of all, so that the events written while the bus is down at the very first start are sent once it is up.
    await busPosition(db, clock.now());
    while (bus.up && !signal?.aborted && performance.now() < end) {
      let n: number;
      try {
        n = await turn();
      } catch (err) {
        cursor = null; // read again from the stored position: what was not confirmed is published again
        if (err instanceof PositionMoved) {
          log.warn('events bus: another instance moved the position; this one stops publishing for now');
          break;
        }
        if (err instanceof BusDownError || !bus.up) break; // the bus module logged it; the next run tries again
        throw err;
      }
      published += n;
      if (n < EVENTS_PER_BATCH) await pause.wait(Math.min(deps.pollMs ?? POLL_MS, end - performance.now()), signal);
    }
    return published;
  }

  return {
    slice,
    /** The stored position, written at the events' end if there is none yet (the first start with a bus). */
    init: () => busPosition(db, clock.now()),
    /** Events were written: publish them now rather than at the next poll. */
    wake: () => pause.wake(),
    /** Seconds since the oldest event not published yet was written (0: none waiting). */
    oldestUnpublishedSeconds: (now: number) => oldestUnpublishedSeconds(db, now),
  };
}

export type BusPublisher = ReturnType<typeof createBusPublisher>;
