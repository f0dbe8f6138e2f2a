import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import { OUTBOX_EVENT_TYPES, type OutboxEvent } from './outbox-events.js';
import type { Database } from './types.js';

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
export async function sweepOutbox(db: Kysely<Database>, before: number, batch = 10_000): Promise<number> {
  let total = 0;
  for (;;) {
    const res = await db
      .deleteFrom('outbox')
      .where('id', 'in', (eb) =>
        eb.selectFrom('outbox').select('id').where('created_at', '<', before).orderBy('id').limit(batch),
      )
      .executeTakeFirst();
    const n = Number(res.numDeletedRows);
    total += n;
    if (n < batch) return total;
  }
}

/** How long an id below the last one read may still appear (a transaction that took it commits later). */
const HOLE_WAIT_MS = 5 * 60_000;
const MAX_HOLES = 10_000;
/** How many ids before the end a cursor opened there watches for late commits. */
const LOOK_BACK = 1_000;

type OutboxRow = {
  id: number | string;
  type: string;
  payload: string;
  origin: string | null;
  created_at: number | string;
};

const entryOf = (row: OutboxRow): OutboxEntry | null => {
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
 * A consumer's place in the outbox, from the end (events before it are not read) or after a given id.
 *
 * Ids are handed out when a row is written, not when it commits: on PostgreSQL a transaction may commit an id
 * lower than one already read. So an id skipped between two read ones is a hole, looked for again by each read
 * until HOLE_WAIT_MS has passed (a rolled-back transaction's id never comes). SQLite writes one transaction at a
 * time: no holes there (`lateCommits: false` looks for none; the gaps it sees are swept rows).
 */
export async function openOutboxCursor(
  db: Kysely<Database>,
  from: 'end' | { after: number },
  opts: { lateCommits?: boolean; now?: () => number } = {},
): Promise<OutboxCursor> {
  const now = opts.now ?? Date.now;
  const lookBack = opts.lateCommits === false ? 0 : LOOK_BACK;
  const holes = new Map<number, number>(); // id → when first missed
  let last = 0;
  const addHoles = (fromId: number, toId: number) => {
    for (let id = fromId; id < toId && holes.size < MAX_HOLES; id++) holes.set(id, now());
  };
  if (from === 'end') {
    const max = await db
      .selectFrom('outbox')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    last = Number(max?.id ?? 0);
    // The ids just before the end that are not visible yet may belong to transactions still running.
    const recent = await db
      .selectFrom('outbox')
      .select('id')
      .where('id', '>', last - lookBack)
      .execute();
    const seen = new Set(recent.map((r) => Number(r.id)));
    for (let id = Math.max(1, last - lookBack + 1); id < last; id++) if (!seen.has(id)) holes.set(id, now());
  } else {
    last = from.after;
  }
  return {
    get last() {
      return last;
    },
    async read(limit = 1_000) {
      const waiting = [...holes.keys()];
      const rows = (await db
        .selectFrom('outbox')
        .selectAll()
        .where((eb) => (waiting.length ? eb.or([eb('id', '>', last), eb('id', 'in', waiting)]) : eb('id', '>', last)))
        .orderBy('id')
        .limit(limit)
        .execute()) as OutboxRow[];
      const out: OutboxEntry[] = [];
      for (const row of rows) {
        const id = Number(row.id);
        if (holes.delete(id)) {
          // filled late
        } else if (id > last) {
          if (lookBack > 0) addHoles(last + 1, id);
          last = id;
        } else {
          continue;
        }
        const entry = entryOf(row);
        if (entry) out.push(entry);
      }
      const expired = now() - HOLE_WAIT_MS;
      for (const [id, at] of holes) if (at < expired) holes.delete(id);
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
