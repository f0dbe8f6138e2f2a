import type { Kysely } from 'kysely';
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

/** Attempts due at `now` of enabled hooks, not leased to anyone: their ids, oldest due first. */
const dueIds = (db: Kysely<Database>, limit: number, now: number) =>
  db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('attempted_at', 'is', null)
    .where('due_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .where('webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('enabled', '=', 1))
    .orderBy('due_at')
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
    const due = await dialect.lockRowsSkippingLocked(dueIds(tx, limit, now)).execute();
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

/**
 * Records an attempt (if it is still this worker's to record), schedules the next one after a failure, and keeps
 * the hook's state: a success ends its failing streak; 410 disables it; three days of nothing but failures too.
 */
async function recordAttempt(
  tx: Kysely<Database>,
  random: () => number,
  delivery: DeliveryRow,
  result: AttemptResult,
): Promise<AttemptOutcome> {
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const gone = result.statusCode === 410;
  const next =
    ok || gone ? null : nextAttemptAt(Number(delivery.attempt), result.attemptedAt, result.retryAfterMs, random);
  {
    const done = await tx
      .updateTable('webhook_deliveries')
      .set({
        attempted_at: result.attemptedAt,
        status_code: result.statusCode,
        duration_ms: result.durationMs,
        error: result.error,
        response_body: result.responseBody,
        next_attempt_at: next,
        claimed_until: null,
      })
      .where('id', '=', Number(delivery.id))
      .where('attempted_at', 'is', null)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) !== 1) return 'lost';
    const hookId = Number(delivery.webhook_id);
    if (ok) {
      // Only a streak to end is written: a success is the usual case, and the hook's row stays untouched by it.
      await tx
        .updateTable('webhooks')
        .set({ failing_since: null })
        .where('id', '=', hookId)
        .where('failing_since', 'is not', null)
        .execute();
      return 'delivered';
    }
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
    return next === null ? 'failed' : 'retried';
  }
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
        const outcomes: AttemptOutcome[] = [];
        for (const a of attempts) outcomes.push(await recordAttempt(tx, random, a.delivery, a.result));
        return outcomes;
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
