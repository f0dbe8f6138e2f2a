import type { Kysely } from 'kysely';
import type { Database } from './types.js';

/**
 * A reader's place in an append-only table read in id order (the outbox, the public events): rows committed since
 * the last read, including ones that committed late.
 *
 * Ids are handed out when a row is written, not when it commits: on PostgreSQL a transaction may commit an id
 * lower than one already read. So an id skipped between two read ones is a hole, looked for again by each read
 * until HOLE_WAIT_MS has passed (a rolled-back transaction's id never comes). SQLite writes one transaction at a
 * time: no holes there (`lateCommits: false` looks for none; the gaps it sees are swept rows).
 */
export type IdCursorTable = 'outbox' | 'events';

/** How long an id below the last one read may still appear (a transaction that took it commits later). */
const HOLE_WAIT_MS = 5 * 60_000;
const MAX_HOLES = 10_000;
/** How many ids before the end a cursor opened there watches for late commits. */
const LOOK_BACK = 1_000;

export interface IdCursor<Row> {
  /** The rows committed since the last read (in id order), as many as `limit`; none: caught up. */
  read(limit?: number): Promise<Row[]>;
  /** the greatest id read so far */
  readonly last: number;
  /**
   * The greatest id at and below which every id was read or given up on: `last`, or just below the lowest hole
   * still watched for. A reader that stores its place stores this one, so a hole filled after a restart is read.
   */
  readonly settled: number;
}

export interface IdCursorOptions {
  /** false: ids commit in order (SQLite), no holes to watch for */
  lateCommits?: boolean;
  now?: () => number;
}

/** Just below the lowest hole still watched for, or `last` when there is none. */
function settledOf(last: number, holes: ReadonlyMap<number, number>): number {
  let low = last;
  for (const id of holes.keys()) if (id - 1 < low) low = id - 1;
  return low;
}

export async function openIdCursor<T extends IdCursorTable>(
  db: Kysely<Database>,
  table: T,
  from: 'end' | { after: number },
  opts: IdCursorOptions = {},
): Promise<IdCursor<Database[T] & { id: number | string }>> {
  type Row = Database[T] & { id: number | string };
  const now = opts.now ?? Date.now;
  const lookBack = opts.lateCommits === false ? 0 : LOOK_BACK;
  const holes = new Map<number, number>(); // id → when first missed
  let last = 0;
  const addHoles = (fromId: number, toId: number) => {
    for (let id = fromId; id < toId && holes.size < MAX_HOLES; id++) holes.set(id, now());
  };
  // Rows are read through the untyped builder: the two tables share only the columns used here.
  const rowsOf = db.selectFrom(table as 'outbox');
  if (from === 'end') {
    const max = await rowsOf.select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
    last = Number(max?.id ?? 0);
    // The ids just before the end that are not visible yet may belong to transactions still running.
    const recent = await rowsOf
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
    get settled() {
      return settledOf(last, holes);
    },
    async read(limit = 1_000) {
      const waiting = [...holes.keys()];
      // Every row is read, whoever it is for: a reader that wants some (a stream's owner) filters what this
      // returns, so its place moves past the rest and a hole is an id, not a row it wants.
      const rows = (await rowsOf
        .selectAll()
        .where((eb) => (waiting.length ? eb.or([eb('id', '>', last), eb('id', 'in', waiting)]) : eb('id', '>', last)))
        .orderBy('id')
        .limit(limit)
        .execute()) as unknown as Row[];
      const out: Row[] = [];
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
        out.push(row);
      }
      const expired = now() - HOLE_WAIT_MS;
      for (const [id, at] of holes) if (at < expired) holes.delete(id);
      return out;
    },
  };
}

/** Deletes the rows of `table` created before `before`, a batch at a time (short transactions); how many. */
export async function sweepCreatedBefore(
  db: Kysely<Database>,
  table: IdCursorTable,
  before: number,
  batch = 10_000,
): Promise<number> {
  const t = table as 'outbox'; // both tables have id and created_at
  let total = 0;
  for (;;) {
    const res = await db
      .deleteFrom(t)
      .where('id', 'in', (eb) =>
        eb.selectFrom(t).select('id').where('created_at', '<', before).orderBy('id').limit(batch),
      )
      .executeTakeFirst();
    const n = Number(res.numDeletedRows);
    total += n;
    if (n < batch) return total;
  }
}
