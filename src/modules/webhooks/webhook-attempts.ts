import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import { DISABLE_AFTER_FAILING_MS, nextAttemptAt } from './webhook-schedule.js';
import type { DeliveryRow } from './webhooks.repository.js';

/** A claimed attempt with what sending it needs of its hook. */
export interface ClaimedAttempt {
  delivery: DeliveryRow;
  url: string;
  /** sealed: the current secret, and the previous one while it still signs */
  secrets: string[];
}

/** What an attempt came to. */
export interface AttemptResult {
  attemptedAt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  /** the receiver's Retry-After, in ms from attemptedAt */
  retryAfterMs: number | null;
}

export type AttemptOutcome = 'delivered' | 'retried' | 'failed' | 'lost';

/**
 * The queue of attempts in `webhook_deliveries`: claimed with a lease (SKIP LOCKED on PostgreSQL, so instances
 * take different rows; SQLite writes one transaction at a time), recorded once (a late worker whose lease was taken
 * over records nothing), and followed by the next attempt of the schedule when it failed.
 */
type Deps = { db: Kysely<Database>; dialect: Dialect };

/**
 * Attempts due at `now` of enabled hooks, not leased to anyone: their ids (`limit` of them, in no order). Read
 * through the pending attempts' index (migration 054): `+webhook_id` keeps both planners from walking a hook's
 * every delivery, attempted ones included, through `webhook_deliveries_webhook` instead (SQLite chose it).
 */
const dueIds = (db: Kysely<Database>, limit: number, now: number) =>
  db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('attempted_at', 'is', null)
    .where('due_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .where((eb) => eb(sql`+webhook_id`, 'in', eb.selectFrom('webhooks').select('id').where('enabled', '=', 1)))
    .limit(limit);

/**
 * Up to `limit` attempts due at `now` of enabled hooks, leased until `now + leaseMs`. A look without a transaction
 * comes first: the dispatcher asks every 250 ms, mostly for nothing, and on the embedded engine a transaction takes
 * the write lock, which the click writer thread holds for tens of milliseconds at a time — the event loop waited
 * for it at every poll. Only when something is due is it claimed under the lock (the lease re-checked there).
 */
async function claimDue({ db, dialect }: Deps, limit: number, now: number, leaseMs: number): Promise<ClaimedAttempt[]> {
  if ((await dueIds(db, 1, now).execute()).length === 0) return [];
  const claimed = await db.transaction().execute(async (tx) => {
    // oldest due first, read in the pending index's order (migration 054); a lease a crash loses was never held
    await dialect.readInIndexOrder(tx);
    await dialect.commitWithoutWaitingForDisk(tx);
    const due = await dialect.lockRowsSkippingLocked(dueIds(tx, limit, now).orderBy('due_at')).execute();
    if (due.length === 0) return [];
    return tx
      .updateTable('webhook_deliveries')
      .set({ claimed_until: now + leaseMs })
      .where(
        'id',
        'in',
        due.map((r) => Number(r.id)),
      )
      .returningAll()
      .execute();
  });
  if (claimed.length === 0) return [];
  // RETURNING keeps no order: oldest due first again
  claimed.sort((x, y) => Number(x.due_at) - Number(y.due_at) || Number(x.id) - Number(y.id));
  const hookIds = [...new Set(claimed.map((d) => Number(d.webhook_id)))];
  const hooks = await db
    .selectFrom('webhooks')
    .select(['id', 'url', 'secret', 'previous_secret', 'previous_secret_until'])
    .where('id', 'in', hookIds)
    .execute();
  const byId = new Map(hooks.map((h) => [Number(h.id), h]));
  return claimed.flatMap((delivery) => {
    const hook = byId.get(Number(delivery.webhook_id));
    if (!hook) return []; // deleted meanwhile: its deliveries went with it
    const previous =
      hook.previous_secret !== null && Number(hook.previous_secret_until ?? 0) > now ? [hook.previous_secret] : [];
    return [{ delivery, url: hook.url, secrets: [hook.secret, ...previous] }];
  });
}

/** Ends hooks' failing streaks (only a streak to end is written: the hook's row stays untouched otherwise). */
async function endStreaks(tx: Kysely<Database>, hookIds: Iterable<number>): Promise<void> {
  const ids = [...hookIds];
  if (ids.length === 0) return;
  await tx
    .updateTable('webhooks')
    .set({ failing_since: null })
    .where('id', 'in', ids)
    .where('failing_since', 'is not', null)
    .execute();
}

/** Rows of attempts written by one statement (7 parameters each: far below either engine's limit). */
const RECORD_CHUNK = 500;

/**
 * Writes what came of the attempts into their rows, in one statement per chunk (an UPDATE … FROM a VALUES list,
 * on both engines: on PostgreSQL a statement per attempt was a round trip each, and recording, not sending, set
 * the pace). Only rows still not attempted are written: a late worker whose lease was taken over records nothing.
 * Answers the ids written.
 */
async function writeResults(
  tx: Kysely<Database>,
  attempts: ReadonlyArray<{ delivery: DeliveryRow; result: AttemptResult; next: number | null }>,
): Promise<Set<number>> {
  const written = new Set<number>();
  for (let i = 0; i < attempts.length; i += RECORD_CHUNK) {
    // Typed once per value, as PostgreSQL infers a VALUES list's column types from what it is given.
    const rows = attempts.slice(i, i + RECORD_CHUNK).map(
      ({ delivery: d, result: r, next }) =>
        sql`(cast(${Number(d.id)} as bigint), cast(${r.attemptedAt} as bigint), cast(${r.statusCode} as integer),
          cast(${r.durationMs} as integer), cast(${r.error} as text), cast(${r.responseBody} as text),
          cast(${next} as bigint))`,
    );
    const { rows: ids } = await sql<{ id: number | string }>`
      update webhook_deliveries
      set attempted_at = v.column2, status_code = v.column3, duration_ms = v.column4, error = v.column5,
        response_body = v.column6, next_attempt_at = v.column7, claimed_until = null
      from (values ${sql.join(rows)}) as v
      where webhook_deliveries.id = v.column1 and webhook_deliveries.attempted_at is null
      returning webhook_deliveries.id`.execute(tx);
    for (const { id } of ids) written.add(Number(id));
  }
  return written;
}

/**
 * Records attempts (those still this worker's to record: writeResults), schedules the next one after each failure,
 * and keeps the hooks' state in the attempts' order: a success ends its hook's failing streak (written once per
 * hook, or before a later failure of the same hook starts one again); 410 disables the hook; three days of nothing
 * but failures too.
 */
async function recordAttempts(
  tx: Kysely<Database>,
  random: () => number,
  attempts: ReadonlyArray<{ delivery: DeliveryRow; result: AttemptResult }>,
): Promise<AttemptOutcome[]> {
  const planned = attempts.map(({ delivery, result }) => {
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    const next =
      ok || gone ? null : nextAttemptAt(Number(delivery.attempt), result.attemptedAt, result.retryAfterMs, random);
    return { delivery, result, ok, gone, next };
  });
  const written = await writeResults(tx, planned);
  const succeeded = new Set<number>();
  const outcomes: AttemptOutcome[] = [];
  for (const { delivery, result, ok, gone, next } of planned) {
    if (!written.has(Number(delivery.id))) {
      outcomes.push('lost');
      continue;
    }
    const hookId = Number(delivery.webhook_id);
    if (ok) {
      succeeded.add(hookId);
      outcomes.push('delivered');
      continue;
    }
    if (succeeded.delete(hookId)) await endStreaks(tx, [hookId]);
    if (next !== null)
      await tx
        .insertInto('webhook_deliveries')
        .values({
          webhook_id: hookId,
          event_id: delivery.event_id,
          event_type: delivery.event_type,
          payload: delivery.payload,
          fanout_key: null,
          attempt: Number(delivery.attempt) + 1,
          first_due_at: Number(delivery.first_due_at),
          due_at: next,
        })
        .execute();
    await failed(tx, hookId, result.attemptedAt, gone);
    outcomes.push(next === null ? 'failed' : 'retried');
  }
  await endStreaks(tx, succeeded);
  return outcomes;
}

/**
 * The queue of attempts in `webhook_deliveries`: claimed with a lease (SKIP LOCKED on PostgreSQL, so instances
 * take different rows; SQLite writes one transaction at a time), recorded once (a late worker whose lease was taken
 * over records nothing), and followed by the next attempt of the schedule when it failed.
 */
export function createAttemptQueue(deps: Deps & { random?: () => number }) {
  const { db } = deps;
  const random = deps.random ?? Math.random;
  return {
    claim: (limit: number, now: number, leaseMs: number) => claimDue(deps, limit, now, leaseMs),
    /** Records attempts in one transaction (the dispatcher gathers what ended while the last one was written). */
    recordMany: (attempts: ReadonlyArray<{ delivery: DeliveryRow; result: AttemptResult }>) =>
      db.transaction().execute(async (tx) => {
        // a record a crash loses leaves its attempt leased: it is made again once the lease runs out (at least once)
        await deps.dialect.commitWithoutWaitingForDisk(tx);
        return recordAttempts(tx, random, attempts);
      }),

    /** Lets claimed attempts go (a shutdown cancelled them): due again at once, on any instance. */
    async release(ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return;
      await db
        .updateTable('webhook_deliveries')
        .set({ claimed_until: null })
        .where('id', 'in', [...ids])
        .where('attempted_at', 'is', null)
        .execute();
    },

    /** How long the oldest attempt not made yet has waited (since its chain's first was due), in seconds. */
    async oldestWaitingSeconds(now: number): Promise<number> {
      const row = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.min('first_due_at').as('at'))
        .where('attempted_at', 'is', null)
        .where('webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('enabled', '=', 1))
        .executeTakeFirst();
      const at = row?.at === null || row?.at === undefined ? null : Number(row.at);
      return at === null ? 0 : Math.max(0, now - at) / 1000;
    },
  };
}

/** A failed attempt's mark on its hook: the streak's start, and disabling after a 410 or three days of failures. */
async function failed(tx: Kysely<Database>, hookId: number, at: number, gone: boolean): Promise<void> {
  const hook = await tx.selectFrom('webhooks').select(['failing_since']).where('id', '=', hookId).executeTakeFirst();
  if (!hook) return;
  const since = hook.failing_since === null ? at : Number(hook.failing_since);
  const reason = gone
    ? 'The receiver answered 410 Gone'
    : at - since >= DISABLE_AFTER_FAILING_MS
      ? 'Every delivery failed for 3 days'
      : null;
  await tx
    .updateTable('webhooks')
    .set(
      reason ? { failing_since: since, enabled: 0, disabled_reason: reason, updated_at: at } : { failing_since: since },
    )
    .where('id', '=', hookId)
    .execute();
}

export type AttemptQueue = ReturnType<typeof createAttemptQueue>;
