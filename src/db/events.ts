import { sql, type Insertable, type Kysely } from 'kysely';
import { clickValuesOf, linkClickedData } from './click-event-payload.js';
import { compiledInsert } from './compiled-inserts.js';
import type { Dialect } from './dialect.js';
import { newEventIds } from './event-ids.js';
import { type IdCursorOptions, openIdCursor, sweepCreatedBefore } from './id-cursor.js';
import type { Database } from './types.js';
import type { EventsTable } from './types/events.js';

/**
 * SPEC §22's public events (migration 043): what webhooks, the live stream and the bus send. Written by the change's
 * own transaction (recordPublicEvents), so an event exists if and only if its change committed; read in id order by
 * each consumer from its place (openEventsCursor). The outbox (db/outbox.ts) is the house's own change feed; these
 * rows are the envelope a receiver outside sees.
 */

/** The event types of SPEC §22 (and §24's `link.health_changed`). `webhook.test` is a hook's own, never stored. */
export const PUBLIC_EVENT_TYPES = [
  'link.created',
  'link.updated',
  'link.deleted',
  'link.clicked',
  'domain.verified',
  'domain.failing',
  'import.completed',
  'link.health_changed',
] as const;

export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

const PUBLIC_TYPES: ReadonlySet<string> = new Set(PUBLIC_EVENT_TYPES);
export const isPublicEventType = (type: string): type is PublicEventType => PUBLIC_TYPES.has(type);

/** PostgreSQL's wake-up for event consumers: a NOTIFY without payload, sent on commit. */
export const EVENTS_CHANNEL = 'ferry_events';

/** The envelope every consumer sends: `{ id: "evt_…", type, timestamp, data }`. */
export interface PublicEvent<T extends string = PublicEventType> {
  id: string;
  type: T;
  /** ISO 8601 */
  timestamp: string;
  data: unknown;
}

/** An event to write: its type and data, and whose it is (who may hear of it). */
export interface PublicEventInput {
  type: PublicEventType;
  /** as the v1 API shows it (snake_case JSON) */
  data: unknown;
  /** the owner of the link or domain; null: the instance's (admins and instance-wide hooks only) */
  userId: number | null;
  domainId?: number | null;
  linkId?: number | null;
}

/** A stored event as consumers read it. */
export interface StoredEvent {
  /** the position in the table (the order consumers read in) */
  seq: number;
  userId: number | null;
  domainId: number | null;
  linkId: number | null;
  event: PublicEvent;
}

const ROWS_PER_INSERT = 500;

/**
 * Built and compiled once per number of rows (db/compiled-inserts.ts): an import's 500 events a transaction were
 * an object per value and a compilation per statement, a tenth of a CSV import's main thread.
 */
const insertEvents = compiledInsert(
  ['event_id', 'type', 'user_id', 'domain_id', 'link_id', 'payload', 'created_at'] as const,
  (db: Kysely<Database>, rows: Array<Insertable<EventsTable>>) => db.insertInto('events').values(rows),
);

/**
 * Writes the events in the caller's transaction (they commit, or roll back, with the change) and, on PostgreSQL,
 * wakes the consumers on commit. Answers the envelopes written, in order.
 */
export async function recordPublicEvents(
  tx: Kysely<Database>,
  dialect: Pick<Dialect, 'notify'>,
  events: readonly PublicEventInput[],
  opts: { at?: number } = {},
): Promise<PublicEvent[]> {
  if (events.length === 0) return [];
  const at = opts.at ?? Date.now();
  const timestamp = new Date(at).toISOString();
  const ids = newEventIds(events.length);
  const envelopes = events.map((e, i) => ({ id: ids[i]!, type: e.type, timestamp, data: e.data }));
  for (let i = 0; i < events.length; i += ROWS_PER_INSERT) {
    const rows = events.slice(i, i + ROWS_PER_INSERT).map((e, j) => {
      const envelope = envelopes[i + j]!;
      return {
        event_id: envelope.id,
        type: e.type,
        user_id: e.userId,
        domain_id: e.domainId ?? null,
        link_id: e.linkId ?? null,
        payload: JSON.stringify(envelope),
        created_at: at,
      };
    });
    await insertEvents(tx, rows);
  }
  await dialect.notify(tx, EVENTS_CHANNEL, '');
  return envelopes;
}

const storedOf = (
  row: EventsTable & { id: number | string },
  wanted?: (type: string) => boolean,
): StoredEvent | null => {
  if (!PUBLIC_TYPES.has(row.type)) return null; // a later build's event: not this one's to read
  if (wanted !== undefined && !wanted(row.type)) return null; // read past without parsing its payload
  return {
    seq: Number(row.id),
    userId: row.user_id === null ? null : Number(row.user_id),
    domainId: row.domain_id === null ? null : Number(row.domain_id),
    linkId: row.link_id === null ? null : Number(row.link_id),
    event: eventOf(row),
  };
};

/** The envelope of a stored row: its payload, or a compact click's built from the row (db/click-event-payload.ts). */
function eventOf(row: EventsTable): PublicEvent {
  const click = clickValuesOf(row.payload);
  if (click === null) return JSON.parse(row.payload) as PublicEvent;
  return {
    id: row.event_id,
    type: 'link.clicked',
    timestamp: new Date(Number(row.created_at)).toISOString(),
    data: linkClickedData(click, Number(row.link_id)),
  };
}

export interface EventsCursor {
  /**
   * The events committed since the last read (in id order, late commits too), as many as `limit`; with `wanted`,
   * only the events of the types it accepts (the others are read past, their payloads not parsed) and how many
   * rows were read in all (`read < limit`: nothing more was committed).
   */
  read(limit?: number): Promise<StoredEvent[]>;
  readWanted(limit: number, wanted: (type: string) => boolean): Promise<{ events: StoredEvent[]; read: number }>;
  /** the greatest position read so far */
  readonly last: number;
  /** the greatest position at and below which every event was read (or its id given up on): db/id-cursor.ts */
  readonly settled: number;
}

/** A consumer's place among the events: from the end, or after a position (a stream resumed, a hook's mark). */
export async function openEventsCursor(
  db: Kysely<Database>,
  from: 'end' | { after: number },
  opts: IdCursorOptions = {},
): Promise<EventsCursor> {
  const rows = await openIdCursor(db, 'events', from, opts);
  return {
    get last() {
      return rows.last;
    },
    get settled() {
      return rows.settled;
    },
    async read(limit = 1_000) {
      const out: StoredEvent[] = [];
      for (const row of await rows.read(limit)) {
        const stored = storedOf(row);
        if (stored) out.push(stored);
      }
      return out;
    },
    async readWanted(limit, wanted) {
      const read = await rows.read(limit);
      const events: StoredEvent[] = [];
      for (const row of read) {
        const stored = storedOf(row, wanted);
        if (stored) events.push(stored);
      }
      return { events, read: read.length };
    },
  };
}

/** The greatest event position so far (0: none): where a consumer that hears only what comes next starts. */
export async function eventsEnd(db: Kysely<Database>): Promise<number> {
  const end = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(end?.id ?? 0);
}

/**
 * How many events were ever written: the events' id sequence (SQLite's AUTOINCREMENT counter, PostgreSQL's identity
 * sequence), which the retention's deletions do not move back. On PostgreSQL a transaction rolled back after its
 * events took their ids has used those ids too (a change that fails a check fails before its events are written).
 */
export async function eventsWritten(db: Kysely<Database>, embedded: boolean): Promise<number> {
  const row = embedded
    ? await sql<{ n: number | null }>`select seq as n from sqlite_sequence where name = 'events'`.execute(db)
    : await sql<{
        n: string | null;
      }>`select pg_sequence_last_value(pg_get_serial_sequence('events', 'id')::regclass) as n`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

/** The tables in which consumers of the events table keep their place, by name. */
type PositionTable = 'webhook_positions' | 'events_bus_positions';

/**
 * A consumer's stored place in the events table: its row in `table`, or, at the consumer's first start, the events'
 * end (what was written before it existed is nobody's to deliver), stored with `columns(end)` and read back (a
 * racing first start stores nothing twice).
 */
export async function storedPosition(
  db: Kysely<Database>,
  table: PositionTable,
  name: string,
  columns: (end: number) => Record<string, number> = () => ({}),
): Promise<number> {
  const read = () => db.selectFrom(table).select('position').where('name', '=', name).executeTakeFirst();
  const row = await read();
  if (row) return Number(row.position);
  const end = await eventsEnd(db);
  await db
    .insertInto(table)
    .values({ name, position: end, ...columns(end) } as never)
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  return Number((await read())!.position);
}

/** The position of an event by its `evt_…` id (a stream's `Last-Event-ID`); null: unknown or swept. */
export async function findEventPosition(db: Kysely<Database>, eventId: string): Promise<number | null> {
  const row = await db.selectFrom('events').select('id').where('event_id', '=', eventId).executeTakeFirst();
  return row ? Number(row.id) : null;
}

/** Deletes the events created before `before`, a batch at a time; how many. */
export const sweepEvents = (db: Kysely<Database>, before: number, batch = 10_000): Promise<number> =>
  sweepCreatedBefore(db, 'events', before, batch);
