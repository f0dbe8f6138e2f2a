import type { Insertable, Kysely } from 'kysely';
import { eventsEnd, openEventsCursor, storedPosition, type EventsCursor, type StoredEvent } from '../../db/events.js';
import type { Database, WebhookDeliveriesTable } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';

/** The fan-out's row in `webhook_positions`. */
const POSITION = 'fanout';
/** Events read (and deliveries written with the position) per transaction. */
const EVENTS_PER_TURN = 1_000;
const ROWS_PER_INSERT = 200;
/**
 * A cursor opened from the stored position first reads again this many events before it: on PostgreSQL an event
 * may commit after later ones were read (db/id-cursor.ts), and the cursor that was watching for it is gone with the
 * process that held it. What was already fanned out is not written twice (`fanout_key`).
 */
const LOOK_BACK = 1_000;
/**
 * With no hook, the position is moved to the end at most this often: each move is a write transaction, which on the
 * embedded engine waits for the click writer's lock on the event loop. A hook made meanwhile does not hear the events
 * left behind: each hook hears only the events after its `after_event` (hears).
 */
const SKIP_EVERY_MS = 10_000;

/** What the fan-out knows of a hook: whose events it hears, which types, which domains, bots or not. */
export interface HookFilter {
  id: number;
  userId: number;
  scope: 'user' | 'instance';
  events: ReadonlySet<string>;
  domains: ReadonlySet<number> | null;
  includeBots: boolean;
  /** the greatest event position when it was made: it hears the events after it, not the ones before */
  afterEvent: number;
}

/**
 * Whether a hook hears an event (SPEC §22): a user's hook only the user's own (never the instance's, user null);
 * an instance hook everything; then the types, the domains (0: the default one) and bots' clicks.
 */
export function hears(hook: HookFilter, stored: StoredEvent): boolean {
  if (!hook.events.has(stored.event.type)) return false;
  if (stored.seq <= hook.afterEvent) return false;
  if (hook.scope === 'user' && stored.userId !== hook.userId) return false;
  if (hook.domains && !hook.domains.has(stored.domainId ?? 0)) return false;
  if (stored.event.type === 'link.clicked' && !hook.includeBots) {
    const click = (stored.event.data as { click?: { bot?: unknown } } | null)?.click;
    if (click?.bot === true) return false;
  }
  return true;
}

async function enabledHooks(db: Kysely<Database>): Promise<HookFilter[]> {
  const rows = await db
    .selectFrom('webhooks')
    .select(['id', 'user_id', 'scope', 'events', 'domains', 'include_bots', 'after_event'])
    .where('enabled', '=', 1)
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    userId: Number(r.user_id),
    scope: r.scope,
    events: new Set(JSON.parse(r.events) as string[]),
    domains: r.domains === null ? null : new Set(JSON.parse(r.domains) as number[]),
    includeBots: Number(r.include_bots) === 1,
    afterEvent: Number(r.after_event),
  }));
}

class PositionMoved extends Error {}

/** The fan-out's stored position; at the first start, the events' end (nobody's to deliver before webhooks). */
const fanoutPosition = (db: Kysely<Database>): Promise<number> => storedPosition(db, 'webhook_positions', POSITION);

/** One pending delivery per (hook, event) that matches, due now. */
function deliveriesOf(events: StoredEvent[], hooks: HookFilter[], now: number): Insertable<WebhookDeliveriesTable>[] {
  const rows: Insertable<WebhookDeliveriesTable>[] = [];
  for (const stored of events)
    for (const hook of hooks)
      if (hears(hook, stored))
        rows.push({
          webhook_id: hook.id,
          event_id: stored.event.id,
          event_type: stored.event.type,
          payload: JSON.stringify(stored.event),
          fanout_key: `${hook.id}:${stored.event.id}`,
          attempt: 1,
          first_due_at: now,
          due_at: now,
        });
  return rows;
}

/** Writes the deliveries and moves the position from `from` to `to`, in one transaction; PositionMoved if it moved. */
async function commitTurn(db: Kysely<Database>, rows: Insertable<WebhookDeliveriesTable>[], from: number, to: number) {
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
      await tx
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + ROWS_PER_INSERT))
        .onConflict((oc) => oc.column('fanout_key').doNothing())
        .execute();
    const moved = await tx
      .updateTable('webhook_positions')
      .set({ position: to })
      .where('name', '=', POSITION)
      .where('position', '=', from)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) throw new PositionMoved();
  });
}

/**
 * Events → deliveries, at least once: the events past the stored position are read with openEventsCursor, and one
 * pending delivery per (hook, event) that matches is written in the same transaction that moves the position,
 * which only moves from where this reader found it (another instance that moved it first wins; this one reopens
 * from there). A crash before the commit leaves the position, so the events are read again.
 */
export function createFanout(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;
  let cursor: EventsCursor | null = null;
  /** the stored position this process's cursor goes on from (it wrote it, or opened there) */
  let mine = -1;
  let running: Promise<number> | null = null;

  async function turn(): Promise<{ events: number; deliveries: number }> {
    const from = await fanoutPosition(db);
    const hooks = await enabledHooks(db);
    // No hook: nothing to read (a click's event each would be parsed for no one); the position moves to the end
    // now and then (SKIP_EVERY_MS), so that a hook made later does not read through what came before it.
    if (hooks.length === 0) return skipToEnd(from);
    if (!cursor || mine !== from) {
      cursor = await openEventsCursor(db, { after: Math.max(0, from - LOOK_BACK) });
      mine = from;
    }
    const types = new Set(hooks.flatMap((h) => [...h.events]));
    const { events, read } = await cursor.readWanted(EVENTS_PER_TURN, (type) => types.has(type));
    // Re-reading the look-back, the cursor may still be behind the stored position: that never moves back.
    const to = Math.max(from, cursor.last);
    if (read === 0 && to === from) return { events: 0, deliveries: 0 };
    const rows = deliveriesOf(events, hooks, clock.now());
    await commitTurn(db, rows, from, to);
    mine = to;
    return { events: read, deliveries: rows.length };
  }

  let skippedAt = Number.NEGATIVE_INFINITY;
  async function skipToEnd(from: number): Promise<{ events: number; deliveries: number }> {
    cursor = null;
    if (clock.now() - skippedAt < SKIP_EVERY_MS) return { events: 0, deliveries: 0 };
    skippedAt = clock.now();
    const to = await eventsEnd(db);
    if (to > from) await commitTurn(db, [], from, to);
    return { events: 0, deliveries: 0 };
  }

  /** Fans out what is committed so far, a turn after another while `more()` allows; the deliveries written. */
  async function run(more: () => boolean): Promise<number> {
    let written = 0;
    try {
      for (;;) {
        const t = await turn();
        written += t.deliveries;
        if (t.events < EVENTS_PER_TURN || !more()) return written;
      }
    } catch (err) {
      cursor = null; // read again from the stored position next time
      if (err instanceof PositionMoved) return written;
      throw err;
    }
  }

  return {
    /** One run at a time per process: a call during a run shares it (and its `more`). Default: everything. */
    run(more: () => boolean = () => true): Promise<number> {
      running ??= run(more).finally(() => {
        running = null;
      });
      return running;
    },
  };
}
