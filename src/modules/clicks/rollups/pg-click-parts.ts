import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../../db/types.js';
import type { ClickEvent } from '../event/click-event.js';
import type { LiveLink } from './pg-set-writer.js';

type Tx = Transaction<Database>;
/** Writes one part's clicks inside its transaction; the part's links that still exist, with their owners. */
type PartWriter = (tx: Tx, events: readonly ClickEvent[]) => Promise<ReadonlyMap<number, LiveLink>>;

/**
 * Parts of a batch, each its own transaction, so two writers can hold two of them at once. Two: four cost one
 * worker about a fifth of its rate (per-transaction work) and gave two workers no more (docs/performance.md).
 */
export const CLICK_PARTS = 2;

/** Links whose owner a writer remembers (about 60 bytes each); past this many it forgets them all and learns again. */
const OWNERS_KEPT = 200_000;

/** The advisory locks' namespace (the two-key form: the second key is the part). */
const LOCK_SPACE = sql`hashtext('ferry:click-parts')`;

/**
 * Click workers on PostgreSQL that write batches over the same rows wait for each other: the links' rows, and
 * each owner's rollups and totals, are locked until a batch's transaction commits (pg-set-writer.ts), and two
 * batches of 1,000 clicks over 100,000 links share a few links, so with one transaction per batch the second
 * worker waited for the first's whole transaction and two workers wrote no more than one (docs/performance.md,
 * "The scale-out path"). Here a batch is cut into CLICK_PARTS parts by owner (the link's owner once this writer
 * has written the link, else the link itself), and each part is committed in a transaction of its own under a
 * transaction-level advisory lock of its number, taken with try: a writer writes first the parts no other writer
 * holds, and waits for one only when every part it has left is held. Two writers then work on different owners'
 * rows, and neither waits for a row the other holds (unless a link changed owner, or one was first seen under a
 * part of its own: the locks only order the work, the rows' own locks keep it correct).
 *
 * Only for keyed clicks (the stream's, through the replay-safe writer): a batch that fails after some of its
 * parts committed is delivered again whole, and the set writer leaves out the clicks whose keys are recorded, so
 * each click is still counted once. The order parts are written in changes which values a day's capped top list
 * admits first among those of different parts (daily-values.ts); the counts stay exact.
 */
export function createClickParts(db: Kysely<Database>, parts = CLICK_PARTS) {
  const owners = new Map<number, number | null>();
  const partOf = (linkId: number) => (owners.get(linkId) ?? linkId) % parts;

  /** The batch's parts, each in the batch's order; empty ones left out. */
  const split = (batch: readonly ClickEvent[]) => {
    const cut = Array.from({ length: parts }, (_, part) => ({ part, events: [] as ClickEvent[] }));
    for (const e of batch) cut[partOf(e.linkId)]!.events.push(e);
    return cut.filter((p) => p.events.length > 0);
  };

  const learn = (live: ReadonlyMap<number, LiveLink>) => {
    if (owners.size + live.size > OWNERS_KEPT) owners.clear();
    for (const [id, link] of live) owners.set(id, link.owner);
  };

  /** One part in a transaction of its own, under its lock: false when another writer holds it (`wait`: wait for it). */
  const writePart = (part: { part: number; events: ClickEvent[] }, write: PartWriter, wait: boolean) =>
    db.transaction().execute(async (tx) => {
      if (wait) await sql`select pg_advisory_xact_lock(${LOCK_SPACE}, ${part.part})`.execute(tx);
      else {
        const { rows } = await sql<{ held: boolean }>`select pg_try_advisory_xact_lock(${LOCK_SPACE}, ${part.part})
          as held`.execute(tx);
        if (!rows[0]!.held) return false;
      }
      learn(await write(tx, part.events));
      return true;
    });

  return {
    /** Writes `batch` part by part with `write` (each part's transaction is its argument). */
    async write(batch: readonly ClickEvent[], write: PartWriter): Promise<void> {
      let left = split(batch);
      while (left.length > 0) {
        const held = [];
        for (const part of left) if (!(await writePart(part, write, false))) held.push(part);
        // Every part left is held by other writers: wait for the first of them.
        if (held.length > 0 && held.length === left.length) await writePart(held.shift()!, write, true);
        left = held;
      }
    },
  };
}
