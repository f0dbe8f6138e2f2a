import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
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
 * batches: links are walked in id order, a page at a time, grouped by their cutoff, and each statement deletes
 * at most `batch` records of the group through `clicks_link_clicked_idx` (link_id, clicked_at). A statement is
 * one short transaction; its size adapts so that one takes about TARGET_MS, and the job pauses as long between
 * two, so that the click writer (a thread of its own on SQLite, waiting for the write lock meanwhile) and the
 * event loop (better-sqlite3 runs a statement synchronously) are never held for long (bench/click-retention.ts).
 */
export const CLICK_RETENTION_EVERY_MS = 24 * 3_600_000;
const DAY_MS = 86_400_000;
/** A statement's aim: the longest the click writer waits for the write lock because of this job. */
const TARGET_MS = 20;
const MIN_BATCH = 100;
const MAX_BATCH = 20_000;
/** Links read per page of the walk. */
const LINK_PAGE = 500;

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

/**
 * Deletes the records of `ids` older than `cutoff`, `batch` at most per statement (adapted to TARGET_MS, with a
 * pause as long between two); returns the batch size reached, for the next group.
 */
async function deleteOlder(
  db: Kysely<Database>,
  ids: number[],
  cutoff: number,
  batch: number,
  run: RetentionRun,
): Promise<number> {
  for (;;) {
    const started = performance.now();
    const picked = db
      .selectFrom('clicks')
      .select('id')
      .where('link_id', 'in', ids)
      .where('clicked_at', '<', cutoff)
      .limit(batch);
    // clicked_at again outside: PostgreSQL then touches only the partitions before the cutoff.
    const result = await db
      .deleteFrom('clicks')
      .where('id', 'in', picked)
      .where('clicked_at', '<', cutoff)
      .executeTakeFirst();
    const ms = performance.now() - started;
    const n = Number(result.numDeletedRows);
    run.statements += 1;
    run.deleted += n;
    if (ms > run.longestMs) run.longestMs = ms;
    if (n < batch) return batch;
    batch = Math.max(MIN_BATCH, Math.min(MAX_BATCH, Math.round((batch * TARGET_MS) / Math.max(ms, 1))));
    await sleep(Math.max(TARGET_MS, ms));
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

  const latestCutoff = cutoffOf(Math.min(...positive));
  let batch = deps.batch ?? 1_000;
  let cursor = 0;
  for (;;) {
    const links = await db
      .selectFrom('links')
      .select(['id', 'domain_id'])
      .where('id', '>', cursor)
      .where((eb) => eb.or([eb('first_click_at', '<', latestCutoff), eb('first_click_at', 'is', null)]))
      .orderBy('id')
      .limit(LINK_PAGE)
      .execute();
    if (links.length === 0) break;
    cursor = Number(links.at(-1)!.id);
    const groups = new Map<number, number[]>();
    for (const l of links) {
      const d = byDomain.get(Number(l.domain_id)) ?? days; // domain 0: the default domain, the instance's
      if (d <= 0) continue;
      const ids = groups.get(d);
      if (ids) ids.push(Number(l.id));
      else groups.set(d, [Number(l.id)]);
    }
    for (const [d, ids] of groups) batch = await deleteOlder(db, ids, cutoffOf(d), batch, run);
  }
  if (run.deleted > 0 || run.droppedPartitions.length > 0)
    deps.log.info({ ...run, longestMs: Math.round(run.longestMs) }, 'click records past their retention deleted');
  return run;
}
