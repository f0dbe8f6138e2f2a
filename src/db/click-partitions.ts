import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';

/**
 * Monthly range partitions of `clicks` on PostgreSQL (migration 005), kept ahead of time by a maintenance job
 * (app.ts and worker.ts schedule it) rather than created on demand: creating a partition while clicks are
 * being written would make the writer wait on DDL.
 *
 * - A partition covers one UTC month of `clicked_at`: `clicks_pYYYYMM`, [first instant, first of next month).
 * - `clicks_default` catches anything outside the prepared months (a skewed clock, a test clock), so an
 *   insert never fails for want of a partition. When a month is prepared later, its rows move out of the
 *   default partition in the same transaction.
 * - New months are attached (`ATTACH PARTITION`), which takes only a SHARE UPDATE EXCLUSIVE lock on `clicks`
 *   (`CREATE TABLE … PARTITION OF` would block every click write for the duration).
 * - Retention drops whole old months (`CLICK_RETENTION_MONTHS`, off by default): an O(1) catalog operation
 *   instead of a DELETE of millions of rows. Counters and rollups are separate tables and stay.
 * - Every run holds a transaction-level advisory lock, so instances running it at once do it once.
 */
export const MONTHS_AHEAD = 3;
/** How often the job runs (app.ts, worker.ts): a few times a day is plenty for months prepared 3 ahead. */
export const CLICK_PARTITIONS_EVERY_MS = 6 * 3_600_000;
const LOCK = sql`select pg_advisory_xact_lock(hashtext('ferry:click-partitions'))`;
const NAME = /^clicks_p(\d{4})(\d{2})$/;

/** The first instant (ms) of the UTC month `offset` months after the one holding `ms`. */
export function monthStart(ms: number, offset = 0): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1);
}

export function partitionName(monthStartMs: number): string {
  const d = new Date(monthStartMs);
  return `clicks_p${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

async function existingPartitions(db: Kysely<unknown>): Promise<Set<string>> {
  const rows = await sql<{
    name: string;
  }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'clicks'::regclass`.execute(db);
  return new Set(rows.rows.map((r) => r.name));
}

/**
 * Creates the missing partitions for the month holding `now`, the MONTHS_AHEAD months after it and the months
 * holding `alsoMonths` (instants), within the caller's transaction (a migration's, or
 * ensureClickPartitions'). Returns their names.
 */
export async function createClickPartitions(
  tx: Kysely<unknown>,
  now: number,
  alsoMonths: readonly number[] = [],
): Promise<string[]> {
  await LOCK.execute(tx);
  const existing = await existingPartitions(tx);
  const months = new Set(alsoMonths.map((ms) => monthStart(ms)));
  for (let i = 0; i <= MONTHS_AHEAD; i += 1) months.add(monthStart(now, i));
  const created: string[] = [];
  for (const lo of [...months].sort((a, b) => a - b)) {
    const name = partitionName(lo);
    if (existing.has(name)) continue;
    const hi = monthStart(lo, 1);
    const table = sql.table(name);
    await sql`create table ${table} (like clicks including defaults)`.execute(tx);
    await sql`with moved as (delete from clicks_default where clicked_at >= ${lo} and clicked_at < ${hi} returning *)
      insert into ${table} select * from moved`.execute(tx);
    await sql`alter table clicks attach partition ${table} for values from (${sql.lit(lo)}) to (${sql.lit(hi)})`.execute(
      tx,
    );
    created.push(name);
  }
  return created;
}

/** The maintenance job: createClickPartitions in a transaction of its own. */
export async function ensureClickPartitions(db: Kysely<unknown>, now: number): Promise<string[]> {
  return db.transaction().execute((tx) => createClickPartitions(tx, now));
}

/** Drops the monthly partitions that ended before the month `months` months before `now`. Returns their names. */
export async function dropExpiredClickPartitions(db: Kysely<unknown>, now: number, months: number): Promise<string[]> {
  if (months <= 0) return [];
  return dropClickPartitionsEndedBy(db, monthStart(now, -months));
}

/**
 * Drops the monthly partitions whose whole month ended at or before `keepFrom` (an instant): every record in them
 * is older. Returns their names. The default partition is never dropped.
 */
export async function dropClickPartitionsEndedBy(db: Kysely<unknown>, keepFrom: number): Promise<string[]> {
  return db.transaction().execute(async (tx) => {
    await LOCK.execute(tx);
    const dropped: string[] = [];
    for (const name of [...(await existingPartitions(tx))].sort()) {
      const m = NAME.exec(name);
      if (!m) continue;
      const end = Date.UTC(Number(m[1]), Number(m[2]), 1); // the month after (months are 0-based in Date.UTC)
      if (end > keepFrom) continue;
      await sql`drop table ${sql.table(name)}`.execute(tx);
      dropped.push(name);
    }
    return dropped;
  });
}

/** The scheduled job (app.ts, worker.ts): months ahead, then retention; logs what changed. */
export async function maintainClickPartitions(
  db: Kysely<unknown>,
  now: number,
  retentionMonths: number,
  log: FastifyBaseLogger,
): Promise<void> {
  const created = await ensureClickPartitions(db, now);
  const dropped = await dropExpiredClickPartitions(db, now, retentionMonths);
  if (created.length || dropped.length) log.info({ created, dropped }, 'click partitions maintained');
}
