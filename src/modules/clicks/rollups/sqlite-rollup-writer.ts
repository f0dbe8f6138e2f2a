import type BetterSqlite3 from 'better-sqlite3';
import type { ClickEvent } from '../event/click-event.js';
import {
  DAY_MS,
  planForLive,
  planRollups,
  planUserRollups,
  type DailyValueGroup,
  type RollupPlan,
  type UserDailyValueGroup,
} from './rollup-plan.js';
import {
  CLICK_RECORDS,
  LINK_COUNTERS,
  LINK_DAILY_CHOICES,
  LINK_DAILY_VALUES,
  LINK_HOURLY,
  USER_DAILY_VALUES,
  USER_HOURLY,
  type DailyValuesTable,
} from './rollup-tables.js';
import { capDailyGroup, MAX_VALUES_PER_DAY, OTHER_VALUE } from './daily-values.js';
import { linkClickedRows, type ClickedLink } from './click-events.js';
import {
  prepareRollupStatements,
  type DailyValueStatements,
  type RollupStatements,
} from './sqlite-rollup-statements.js';

/**
 * What a batch of clicks writes on the embedded engine, as prepared statements on one better-sqlite3 handle:
 * rollup-plan.ts's plan applied inside a transaction the caller holds (the statements are prepared in
 * sqlite-rollup-statements.ts). Two callers, one set of statements:
 * the click writer thread (sqlite-click-thread.ts, live visits, its own connection) and the importer
 * (SPEC §20: imported visits, on the connection whose transaction writes their links).
 *
 * It applies the plan: the click records, the link's counters (one UPDATE per link), the hourly rollup, the
 * visitor set, the daily values, capped at MAX_VALUES_PER_DAY distinct values per link, day and kind, and the
 * daily choices (the clicks a rule or a variant routed: SPEC §21).
 * Clicks of a link deleted meanwhile are dropped, like the records a delete cascades away.
 *
 * Measured costs it is shaped by (bench/): a statement is a few µs, a commit costs per page it dirties; sorted
 * by link, a transaction dirties each page about once for all of its clicks on it. The number of distinct
 * values already stored per link, day and kind may be remembered between transactions by the caller
 * (`known`) instead of being counted every time.
 */

/** What one application of a plan leaves for the caller to remember once its transaction has committed. */
export type DistinctCounts = Map<string, number>;

export interface SqliteRollupWriter {
  /**
   * Writes `clicks` (records marked `imported` when said) and their rollups in the caller's transaction.
   * `known`: distinct values per "link:kind:day" and "u:user:kind:day" remembered from committed transactions.
   * Returns the distinct counts this application established, to remember after the commit.
   */
  apply(clicks: readonly ClickEvent[], opts: { imported: boolean; known: ReadonlyMap<string, number> }): DistinctCounts;
  /** After a failed transaction: drops rows added but not yet written. */
  discard(): void;
}

type Known = ReadonlyMap<string, number>;

/**
 * Adds one group's values, capped. `storedAtMost`: a bound on the values stored for the group (its link's or
 * user's clicks so far; undefined when not at hand). Fewer than the cap leaves room for, even if every value is
 * new, and the cap cannot be reached: no count, no probes (uniform traffic over many links: most groups). The
 * distinct count then stays unknown, so it is not remembered; otherwise it is set in `counts` under `id`.
 */
function addCapped(
  s: DailyValueStatements,
  t: DailyValuesTable,
  owner: number,
  g: DailyValueGroup | UserDailyValueGroup,
  at: { id: string; storedAtMost: number | undefined; known: Known; counts: DistinctCounts },
): void {
  const { kind, dayStart } = g.key;
  const add = (value: string, n: number) => s.rows.add(t.values(owner, kind, dayStart, value, n));
  if (at.storedAtMost !== undefined && !at.known.has(at.id) && at.storedAtMost + g.values.size <= MAX_VALUES_PER_DAY) {
    for (const [value, n] of g.values) add(value, n);
    return;
  }
  const stored = at.known.get(at.id) ?? s.count.get(owner, kind, dayStart, OTHER_VALUE)!;
  const capped = capDailyGroup(g, stored, (value) => s.stored.get(owner, kind, dayStart, value) !== undefined);
  for (const [value, n] of capped.rows) add(value, n);
  at.counts.set(at.id, capped.distinct);
}

/** The per-user rollups of a live plan: hours and capped daily values. */
function applyUserRollups(
  s: RollupStatements,
  plan: RollupPlan,
  owners: ReadonlyMap<number, number | null>,
  known: Known,
  counts: DistinctCounts,
): void {
  const users = planUserRollups(plan, owners);
  // A (user, kind, day) holds at most as many values as the user's clicks that day, read before this
  // transaction adds its hours, for the groups whose distinct count is not remembered.
  const userDayBefore = new Map<string, number>();
  for (const g of users.daily) {
    const { userId, dayStart } = g.key;
    const day = `${userId}:${dayStart}`;
    if (!known.has(`u:${g.id}`) && !userDayBefore.has(day))
      userDayBefore.set(day, s.userDayClicks.get(userId, dayStart, dayStart + DAY_MS)!);
  }
  for (const h of users.hours) s.addUserHour.run(USER_HOURLY.values(h));
  for (const g of users.daily) {
    const storedAtMost = userDayBefore.get(`${g.key.userId}:${g.key.dayStart}`);
    addCapped(s.userValues, USER_DAILY_VALUES, g.key.userId, g, { id: `u:${g.id}`, storedAtMost, known, counts });
  }
  s.userValues.rows.flush();
}

/**
 * SPEC §22's `link.clicked` for the live clicks just stored, in their transaction: their records' ids are the
 * last `stored` ones (this connection is the one writer, so they were numbered in the order they were added).
 * One max(id) read and multi-row inserts per transaction: no query per click.
 */
function writeClickEvents(
  s: RollupStatements,
  clicks: readonly ClickEvent[],
  facts: RollupPlan['facts'],
  linksOf: ReadonlyMap<number, ClickedLink>,
  stored: number,
): void {
  let clickId = Number(s.lastClickId.get()) - stored + 1;
  const rows: Parameters<typeof linkClickedRows>[0][number][] = [];
  clicks.forEach((event, i) => {
    const link = linksOf.get(event.linkId);
    if (link) rows.push({ clickId: clickId++, event, facts: facts[i]!, link });
  });
  for (const row of linkClickedRows(rows, Date.now())) s.eventRows.add(row);
  s.eventRows.flush();
}

function applyPlan(
  s: RollupStatements,
  clicks: readonly ClickEvent[],
  opts: { imported: boolean; known: Known },
): DistinctCounts {
  const { known } = opts;
  const counts: DistinctCounts = new Map();
  const full = planRollups(clicks);
  const owners = new Map<number, number | null>();
  const clicksBefore = new Map<number, number>();
  const linksOf = new Map<number, ClickedLink>();
  for (const row of s.liveLinks(full.links.map((g) => g.linkId)).values()) {
    owners.set(row.id, row.user_id);
    clicksBefore.set(row.id, row.click_count);
    linksOf.set(row.id, { userId: row.user_id, domainId: row.domain_id, originalUrl: row.original_url });
  }
  const live = new Set(owners.keys());
  const plan = live.size === full.links.length ? full : planForLive(full, live);
  let stored = 0;
  clicks.forEach((e, i) => {
    if (!live.has(e.linkId)) return;
    s.clickRows.add(CLICK_RECORDS.values(e, full.facts[i]!, opts.imported));
    stored += 1;
  });
  s.clickRows.flush();
  if (!opts.imported && stored > 0) writeClickEvents(s, clicks, full.facts, linksOf, stored);
  for (const h of plan.hours) s.hourRows.add(LINK_HOURLY.values(h));
  s.hourRows.flush();
  const freshVisitors = new Map<number, number>();
  s.addVisitors(plan.visitors, freshVisitors);
  for (const g of plan.daily)
    addCapped(s.linkValues, LINK_DAILY_VALUES, g.key.linkId, g, {
      id: g.id,
      storedAtMost: clicksBefore.get(g.key.linkId),
      known,
      counts,
    });
  // Each group's cap reads only its own (link, kind, day), which no other group of this plan writes.
  s.linkValues.rows.flush();
  for (const c of plan.choices) s.choiceRows.add(LINK_DAILY_CHOICES.values(c));
  s.choiceRows.flush();
  applyUserRollups(s, plan, owners, known, counts);
  for (const g of plan.links)
    s.linkRows.add([g.linkId, ...LINK_COUNTERS.map((c) => c.value(g)), freshVisitors.get(g.linkId) ?? 0]);
  s.linkRows.flush();
  return counts;
}

export function createSqliteRollupWriter(db: BetterSqlite3.Database): SqliteRollupWriter {
  const s = prepareRollupStatements(db);
  return {
    apply: (clicks, opts) => applyPlan(s, clicks, opts),
    discard() {
      for (const rows of [
        s.clickRows,
        s.hourRows,
        s.linkValues.rows,
        s.choiceRows,
        s.userValues.rows,
        s.linkRows,
        s.eventRows,
      ])
        rows.discard();
    },
  };
}

/**
 * Imported visits on the embedded engine: these statements on the main connection, inside the importer's
 * transaction (Kysely's, on this same handle, so its `tx` is not needed): prepared statements run a few µs per
 * row where a Kysely statement costs its compilation too. Prepared on first use, after the migrations.
 */
export function createImportedVisitsWriter(
  sqlite: BetterSqlite3.Database,
): (tx: unknown, batch: readonly ClickEvent[]) => Promise<void> {
  let rollups: SqliteRollupWriter | null = null;
  const none = new Map<string, number>();
  return async (_tx, batch) => {
    if (!sqlite.inTransaction) throw new Error('imported visits are written inside the import transaction');
    rollups ??= createSqliteRollupWriter(sqlite);
    try {
      rollups.apply(batch, { imported: true, known: none });
    } catch (err) {
      rollups.discard();
      throw err;
    }
  };
}
