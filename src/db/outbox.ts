import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import { OUTBOX_EVENT_TYPES, type OutboxEvent } from './outbox-events.js';
import { type IdCursorOptions, openIdCursor, sweepCreatedBefore } from './id-cursor.js';
import type { Database } from './types.js';
import type { OutboxTable } from './types/outbox.js';

export type * from './outbox-events.js';

/**
 * The typed outbox (migration 038): each change's events, written by the change's own transaction, read in id
 * order by consumers that keep their place. Every module reaches it here (db is below every module); what the
 * events mean is db/outbox-events.ts.
 */

/** PostgreSQL's wake-up for consumers: a NOTIFY without payload, sent on commit of a transaction with events. */
export const OUTBOX_CHANNEL = 'ferry_outbox';

/** How long an event is kept (SPEC §22's EVENTS_RETENTION_DAYS default): the sweep drops older rows. */
export const OUTBOX_RETENTION_MS = 7 * 24 * 3_600_000;

/** An event as a consumer reads it. */
export interface OutboxEntry {
  id: number;
  /** the app instance that made the change; null: every consumer applies it */
  origin: string | null;
  createdAt: number;
  event: OutboxEvent;
}

const ROWS_PER_INSERT = 500;

/**
 * Writes the events in the caller's transaction (so they commit, or roll back, with the change) and, on
 * PostgreSQL, wakes the consumers on commit (dialect.notify: NOTIFY is delivered if and only if it commits).
 * `origin`: the instance that made the change, whose own consumers may skip it; none: every consumer applies it.
 */
export async function recordEvents(
  tx: Kysely<Database>,
  dialect: Pick<Dialect, 'notify'>,
  events: readonly OutboxEvent[],
  opts: { origin?: string | null; at?: number } = {},
): Promise<void> {
  if (events.length === 0) return;
  const at = opts.at ?? Date.now();
  const origin = opts.origin ?? null;
  for (let i = 0; i < events.length; i += ROWS_PER_INSERT) {
    const rows = events
      .slice(i, i + ROWS_PER_INSERT)
      .map((e) => ({ type: e.type, payload: JSON.stringify(e.data), origin, created_at: at }));
    await tx.insertInto('outbox').values(rows).execute();
  }
  await dialect.notify(tx, OUTBOX_CHANNEL, '');
}

/** One event in the caller's transaction (recordEvents). */
export const recordEvent = (
  tx: Kysely<Database>,
  dialect: Pick<Dialect, 'notify'>,
  event: OutboxEvent,
  opts: { origin?: string | null; at?: number } = {},
): Promise<void> => recordEvents(tx, dialect, [event], opts);

/** Deletes the events created before `before`, a batch at a time; how many. */
export const sweepOutbox = (db: Kysely<Database>, before: number, batch = 10_000): Promise<number> =>
  sweepCreatedBefore(db, 'outbox', before, batch);

const entryOf = (row: OutboxTable & { id: number | string }): OutboxEntry | null => {
  if (!OUTBOX_EVENT_TYPES.has(row.type)) return null; // a later build's event: not this one's to read
  return {
    id: Number(row.id),
    origin: row.origin,
    createdAt: Number(row.created_at),
    event: { type: row.type, data: JSON.parse(row.payload) } as OutboxEvent,
  };
};

export interface OutboxCursor {
  /** The events committed since the last read (in id order), as many as `limit`; none: caught up. */
  read(limit?: number): Promise<OutboxEntry[]>;
  /** the greatest id read so far */
  readonly last: number;
}

/**
 * A consumer's place in the outbox, from the end (events before it are not read) or after a given id; events
 * that commit late (an id lower than one read) are found too (db/id-cursor.ts).
 */
export async function openOutboxCursor(
  db: Kysely<Database>,
  from: 'end' | { after: number },
  opts: IdCursorOptions = {},
): Promise<OutboxCursor> {
  const rows = await openIdCursor(db, 'outbox', from, opts);
  return {
    get last() {
      return rows.last;
    },
    async read(limit = 1_000) {
      const out: OutboxEntry[] = [];
      for (const row of await rows.read(limit)) {
        const entry = entryOf(row);
        if (entry) out.push(entry);
      }
      return out;
    },
  };
}

/**
 * Runs `work` in the caller's transaction when `db` is one, else in a transaction of its own: a change and its
 * event (recordEvents) commit together whichever way a repository is called.
 */
export const inTransaction = <T>(db: Kysely<Database>, work: (tx: Kysely<Database>) => Promise<T>): Promise<T> =>
  db.isTransaction ? work(db) : db.transaction().execute(work);
