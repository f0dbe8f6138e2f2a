import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { sql, type ExpressionBuilder, type Kysely, type RawBuilder } from 'kysely';
import { dropClickPartitionsEndedBy } from '../../db/click-partitions.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';

/**
 * SPEC §24's click retention: click records older than CLICK_RETENTION_DAYS (or their link's domain's
 * `click_retention_days`: null the instance's value, 0 forever) are deleted at start-up and then daily, by the
 * `click-retention` job (clicks.module.ts; the job runner runs it once across the instances).
 *
 * What stays: everything the statistics read. They read the rollups and the counters on `links`
 * (link_click_hourly, link_click_daily_values, link_click_daily_choices, link_visitors, the user rollups),
 * never the records, so every statistic is the same after a deletion; only GET /links/{code}/clicks (the
 * records themselves, JSON and CSV) lists fewer.
 *
 * How: on PostgreSQL, a monthly partition whose whole month is past the longest retention in use (no domain
 * keeping its clicks forever) is dropped at once (db/click-partitions.ts). Everything else is deleted in bounded
 * batches in the order the records were written, through `clicks_clicked_idx` (clicked_at, id), so that one
 * statement's records share their pages (a link at a time, they lay on as many pages as records: more to write
 * and slower; migration 053). The job walks the records older than the newest cutoff in use, `batch` at a time,
 * from a position in that index, and deletes those past their own link's (when every link has the same retention,
 * all of them). A delete statement is one short transaction; its size adapts so that one takes about TARGET_MS,
 * so that the click writer (a thread of its own on SQLite, waiting for the write lock meanwhile) and the event loop
 * (better-sqlite3 runs a statement synchronously) are never held for long; and the job pauses three times as long
 * between two, so that its writes take a quarter of the disk's time at most: the click writer's commits wait
 * behind what the disk has queued (on PostgreSQL, the deletion's WAL): on PostgreSQL on a VM's disk, with an
 * equal pause 2.4 % of its writes took over 100 ms during a deletion of 10,000,000 records, 0.6 % with this one,
 * for a deletion taking twice as long (bench/click-retention.ts, docs/privacy.md). Nothing waits for the job: it
 * runs once a day, and after the first day deletes a day of records.
 */
export const CLICK_RETENTION_EVERY_MS = 24 * 3_600_000;
const DAY_MS = 86_400_000;
/** A statement's aim: the longest the click writer waits for the write lock because of this job. */
const TARGET_MS = 20;
const MIN_BATCH = 100;
const MAX_BATCH = 20_000;
/** The pause after a statement, in multiples of its time (of TARGET_MS at least): the job's writes, a quarter. */
const PAUSE_FACTOR = 3;

export interface ClickRetentionDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** CLICK_RETENTION_DAYS (0: forever) */
  days: number;
  /** PostgreSQL: clicks are partitioned by month (dialect.rangePartitioning) */
  partitioned: boolean;
  log: Pick<FastifyBaseLogger, 'info'>;
  /** the first batch's size (it then adapts); default 1,000 */
  batch?: number;
  /** the pause after a statement in multiples of its time; default PAUSE_FACTOR (bench/click-retention.ts) */
  pauseFactor?: number;
}

export interface RetentionRun {
  deleted: number;
  droppedPartitions: string[];
  statements: number;
  /** the longest single delete statement (ms) */
  longestMs: number;
}

/** The retention in days of each domain that has its own (null: the instance's). */
async function domainRetention(db: Kysely<Database>): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('domains')
    .select(['id', 'click_retention_days'])
    .where('click_retention_days', 'is not', null)
    .execute();
  return new Map(rows.map((r) => [Number(r.id), Number(r.click_retention_days)]));
}

/** A record's cutoff when the retention differs by domain: its link's domain's, else the instance's. */
function cutoffByDomain(byDomain: Map<number, number>, days: number, cutoffOf: (d: number) => number) {
  // Forever (0) is a cutoff no record is older than.
  const of = (d: number) => (d > 0 ? cutoffOf(d) : Number.MIN_SAFE_INTEGER);
  const domainOfLink = sql`(select links.domain_id from links where links.id = clicks.link_id)`;
  // Cast: PostgreSQL would read the bare parameters of a CASE as text.
  const ms = (d: number) => sql`cast(${of(d)} as bigint)`;
  const whens = [...byDomain].map(([domain, d]) => sql`when ${domain} then ${ms(d)}`);
  return sql<number>`case ${domainOfLink} ${sql.join(whens, sql` `)} else ${ms(days)} end`;
}

interface Walk {
  /** no record at or past this is deleted (the newest cutoff in use) */
  before: number;
  /** each record's own cutoff (null: `before` is every record's) */
  cutoff: RawBuilder<number> | null;
}

/** The records past the position `after` in (clicked_at, id) order. */
function pastPosition(after: [number, number]) {
  // The bare `clicked_at` bound beside the row comparison lets PostgreSQL prune the monthly partitions when it
  // plans the statement.
  return (eb: ExpressionBuilder<Database, 'clicks'>) =>
    eb.and([eb('clicked_at', '>=', after[0]), eb(eb.refTuple('clicked_at', 'id'), '>', eb.tuple(after[0], after[1]))]);
}

/** The records up to `last` (clicked_at, id) included, or when none is given the rest before `before`. */
function upTo(last: [number, number] | null, before: number) {
  // One upper bound only: given `clicked_at < before` as well, SQLite ranges the index up to `before` and
  // filters the rest, so that a statement read every old record left.
  return (eb: ExpressionBuilder<Database, 'clicks'>) =>
    last
      ? eb.and([eb('clicked_at', '<=', last[0]), eb(eb.refTuple('clicked_at', 'id'), '<=', eb.tuple(last[0], last[1]))])
      : eb('clicked_at', '<', before);
}

/**
 * One statement: the next `batch` records of the walk past `after`, those past their cutoff deleted. It deletes a
 * range of clicks_clicked_idx, (after, last], found first by an index-only read: every record in it is older than
 * `walk.before`. Deleting `id in (select … limit n)` instead made PostgreSQL join the picked ids with every
 * partition (a hash join over a scan of the whole table, or n lookups in each partition's primary key, which
 * leads with `id`): its statements took as long as the table was large, and the adaptive size fell to near
 * MIN_BATCH. Starting at the position rather than at the oldest record also steps over the entries of the
 * records already deleted, which PostgreSQL keeps in the index until a vacuum. A record written meanwhile behind
 * the position (an old time, e.g. a replayed journal) waits for the next run.
 */
async function deleteNext(db: Kysely<Database>, walk: Walk, after: [number, number], batch: number) {
  const end = await db
    .selectFrom('clicks')
    .where(pastPosition(after))
    .where('clicked_at', '<', walk.before)
    .select(['clicked_at', 'id'])
    .orderBy('clicked_at')
    .orderBy('id')
    .limit(1)
    .offset(batch - 1)
    .executeTakeFirst();
  const last: [number, number] | null = end ? [Number(end.clicked_at), Number(end.id)] : null;
  let doomed = db.deleteFrom('clicks').where(pastPosition(after)).where(upTo(last, walk.before));
  if (walk.cutoff) doomed = doomed.where((eb) => eb('clicked_at', '<', walk.cutoff!));
  const result = await doomed.executeTakeFirst();
  return { deleted: Number(result.numDeletedRows), last };
}

/**
 * Walks the records older than `walk.before` in time order, deleting those past their cutoff, `batch` at most per
 * statement (adapted to TARGET_MS, with a pause `pauseFactor` times as long between two).
 */
async function deleteOld(
  db: Kysely<Database>,
  walk: Walk,
  { batch, pauseFactor }: { batch: number; pauseFactor: number },
  run: RetentionRun,
): Promise<void> {
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, 0];
  for (;;) {
    const started = performance.now();
    const { deleted, last } = await deleteNext(db, walk, after, batch);
    const ms = performance.now() - started;
    run.statements += 1;
    run.deleted += deleted;
    if (ms > run.longestMs) run.longestMs = ms;
    if (!last) return;
    after = last;
    batch = Math.max(MIN_BATCH, Math.min(MAX_BATCH, Math.round((batch * TARGET_MS) / Math.max(ms, 1))));
    await sleep(Math.max(TARGET_MS, ms) * pauseFactor);
  }
}

/** Deletes the click records past their retention; returns what it did. */
export async function deleteExpiredClicks(deps: ClickRetentionDeps): Promise<RetentionRun> {
  const { db, clock, days } = deps;
  const run: RetentionRun = { deleted: 0, droppedPartitions: [], statements: 0, longestMs: 0 };
  const byDomain = await domainRetention(db);
  const inUse = [days, ...byDomain.values()];
  const positive = inUse.filter((d) => d > 0);
  if (positive.length === 0) return run;
  const now = clock.now();
  const cutoffOf = (d: number) => now - d * DAY_MS;

  // Whole months past every retention in use, when no link keeps its clicks forever.
  if (deps.partitioned && positive.length === inUse.length)
    run.droppedPartitions = await dropClickPartitionsEndedBy(
      db as unknown as Kysely<unknown>,
      cutoffOf(Math.max(...positive)),
    );

  const uniform = inUse.every((d) => d === days);
  await deleteOld(
    db,
    {
      before: cutoffOf(Math.min(...positive)),
      cutoff: uniform ? null : cutoffByDomain(byDomain, days, cutoffOf),
    },
    { batch: deps.batch ?? 1_000, pauseFactor: deps.pauseFactor ?? PAUSE_FACTOR },
    run,
  );
  if (run.deleted > 0 || run.droppedPartitions.length > 0)
    deps.log.info({ ...run, longestMs: Math.round(run.longestMs) }, 'click records past their retention deleted');
  return run;
}
