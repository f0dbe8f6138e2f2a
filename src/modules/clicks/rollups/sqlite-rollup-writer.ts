import type BetterSqlite3 from 'better-sqlite3';
import type { ClickEvent } from '../event/click-event.js';
import { DAY_MS, planForLive, planRollups, planUserRollups, type DailyValueGroup, type RollupPlan, type UserDailyValueGroup, type VisitorPair } from './rollup-plan.js';
import {
  CLICK_RECORDS, LINK_COUNTERS, LINK_DAILY_VALUES, LINK_HOURLY, upsertColumns, USER_DAILY_VALUES, USER_HOURLY,
  type CounterMerge, type DailyValuesTable, type RollupUpsert,
} from './rollup-tables.js';
import { capDailyGroup, MAX_VALUES_PER_DAY, OTHER_VALUE } from './daily-values.js';

/**
 * What a batch of clicks writes on the embedded engine, as prepared statements on one better-sqlite3 handle:
 * rollup-plan.ts's plan applied inside a transaction the caller holds. Two callers, one set of statements:
 * the click writer thread (sqlite-click-thread.ts, live visits, its own connection) and the importer
 * (SPEC §20: imported visits, on the connection whose transaction writes their links).
 *
 * It applies the plan: the click records, the link's counters (one UPDATE per link), the hourly rollup, the
 * visitor set and the daily values, capped at MAX_VALUES_PER_DAY distinct values per link, day and kind.
 * Clicks of a link deleted meanwhile are dropped, like the records a delete cascades away.
 *
 * Measured costs it is shaped by (bench/): a statement is a few µs, a commit costs per page it dirties; sorted
 * by link, a transaction dirties each page about once for all of its clicks on it. The number of distinct
 * values already stored per link, day and kind may be remembered between transactions by the caller
 * (`known`) instead of being counted every time.
 */

/**
 * A single-row statement run over many rows: ROWS_PER_STATEMENT rows per execution of its multi-row form, the
 * rest one by one. Per row, the statement's own cost (the call, binding, step and reset) is then shared: measured
 * on upserts sorted by key, 1.85 → 1.22 µs of CPU per row at 32 rows (daily values), 1.0 → 0.77 (hours); the
 * links' lookups and counter updates, 32 links a statement, took the thread from 12.3 to 12.0 µs per uniform
 * click, and the visitors one statement per link instead of one per visitor 0.99 → 0.76 µs. `add` takes one
 * row's values; `flush` writes what was added (call it before anything reads those rows).
 */
const ROWS_PER_STATEMENT = 32;
const rowsSql = (columns: number, rows: number): string => Array(rows).fill(`(${Array(columns).fill('?').join(', ')})`).join(', ');

interface RowWriter {
  /** one row's values, in the statement's column order */
  add(row: readonly unknown[]): void;
  flush(): void;
  /** forgets rows added but not written (a failed transaction) */
  discard(): void;
}

type LinkRow = { id: number; user_id: number | null; click_count: number };

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

function rowWriter(db: BetterSqlite3.Database, columns: number, statement: (values: string) => string): RowWriter {
  const one = db.prepare<unknown[]>(statement(rowsSql(columns, 1)));
  const many = db.prepare<unknown[]>(statement(rowsSql(columns, ROWS_PER_STATEMENT)));
  const full = ROWS_PER_STATEMENT * columns;
  let params: unknown[] = [];
  return {
    add(row) {
      for (const v of row) params.push(v);
      if (params.length === full) {
        many.run(params);
        params = [];
      }
    },
    flush() {
      for (let i = 0; i < params.length; i += columns) one.run(params.slice(i, i + columns));
      params = [];
    },
    discard() {
      params = [];
    },
  };
}

/** A rollup table's upsert (rollup-tables.ts) with `values` rows. */
const upsertSql = (t: RollupUpsert<never>) => (values: string): string =>
  `insert into ${t.table} (${upsertColumns(t).join(', ')}) values ${values} ` +
  `on conflict (${t.key.join(', ')}) do update set ${t.sums.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`;

const upsertRows = (db: BetterSqlite3.Database, t: RollupUpsert<never>): RowWriter => rowWriter(db, upsertColumns(t).length, upsertSql(t));

/** Each link's row (its owner, null: anonymous, and its clicks so far) for those that still exist: 32 per statement. */
function liveLinksReader(db: BetterSqlite3.Database): (ids: readonly number[]) => Map<number, LinkRow> {
  const linkSql = (n: number) => `select id, user_id, click_count from links where id in (${Array(n).fill('?').join(', ')})`;
  const linkOne = db.prepare<[number], LinkRow>(linkSql(1));
  const linkMany = db.prepare<unknown[], LinkRow>(linkSql(ROWS_PER_STATEMENT));
  return (ids) => {
    const rows = new Map<number, LinkRow>();
    let i = 0;
    for (; i + ROWS_PER_STATEMENT <= ids.length; i += ROWS_PER_STATEMENT) for (const r of linkMany.all(ids.slice(i, i + ROWS_PER_STATEMENT))) rows.set(r.id, r);
    for (; i < ids.length; i += 1) {
      const r = linkOne.get(ids[i]!);
      if (r !== undefined) rows.set(r.id, r);
    }
    return rows;
  };
}

/**
 * A link's new visitors, for `changes` (a visitor already stored changes nothing): one statement per link and
 * up to 32 visitors, so that `changes` is that link's. (One statement across links with RETURNING measured no
 * faster than one per visitor: 1.58–1.74 against 1.69–1.82 µs per row.)
 */
function visitorsWriter(db: BetterSqlite3.Database): (visitors: readonly VisitorPair[], fresh: Map<number, number>) => void {
  const visitorStatements: Array<{ run(params: unknown[]): { changes: number } }> = [];
  const visitorsOf = (n: number) => (visitorStatements[n] ??= db.prepare<unknown[]>(`insert into link_visitors (link_id, ip) values ${rowsSql(2, n)} on conflict do nothing`));
  return (visitors, fresh) => {
    for (let i = 0; i < visitors.length; ) {
      const linkId = visitors[i]!.linkId;
      const params: unknown[] = [];
      let n = 0;
      for (; i < visitors.length && visitors[i]!.linkId === linkId && n < ROWS_PER_STATEMENT; i += 1, n += 1) params.push(linkId, visitors[i]!.ip);
      const added = visitorsOf(n).run(params).changes;
      if (added > 0) fresh.set(linkId, (fresh.get(linkId) ?? 0) + added);
    }
  };
}

/** A table of daily values (a link's or a user's): its rows, and the two reads its cap makes. */
function dailyValueStatements(db: BetterSqlite3.Database, t: DailyValuesTable) {
  const where = `${t.key[0]} = ? and kind = ? and day_start = ?`;
  return {
    rows: upsertRows(db, t),
    /** distinct values stored for (owner, kind, day), OTHER_VALUE not included */
    count: db.prepare<[number, string, number, string], number>(`select count(*) from ${t.table} where ${where} and value <> ?`).pluck(),
    stored: db.prepare<[number, string, number, string], number>(`select 1 from ${t.table} where ${where} and value = ?`).pluck(),
  };
}

/** A link counter (rollup-tables.ts) merged with column `k` of the VALUES. */
const mergeCounter = (c: string, merge: CounterMerge, k: number): string =>
  merge === 'add' ? `${c} = ${c} + v.column${k}` : `${c} = ${merge}(coalesce(${c}, v.column${k}), v.column${k})`;

/** The links' counters: one UPDATE … FROM (VALUES …) per 32 links (a search by rowid each); the id, the counters, then the new visitors. */
function linkCountersWriter(db: BetterSqlite3.Database): RowWriter {
  const set = [...LINK_COUNTERS.map((c, i) => mergeCounter(c.column, c.merge, i + 2)), mergeCounter('unique_visitors', 'add', LINK_COUNTERS.length + 2)];
  return rowWriter(db, LINK_COUNTERS.length + 2, (values) => `update links set ${set.join(', ')} from (values ${values}) as v where links.id = v.column1`);
}

/** The statements of one handle (prepared once: the tables must exist). */
function prepareStatements(db: BetterSqlite3.Database) {
  return {
    liveLinks: liveLinksReader(db),
    clickRows: rowWriter(db, CLICK_RECORDS.columns.length, (values) => `insert into ${CLICK_RECORDS.table} (${CLICK_RECORDS.columns.join(', ')}) values ${values}`),
    hourRows: upsertRows(db, LINK_HOURLY),
    addVisitors: visitorsWriter(db),
    linkValues: dailyValueStatements(db, LINK_DAILY_VALUES),
    // A user's clicks on a UTC day so far (every hour of it): the bound of the values stored for that day.
    userDayClicks: db.prepare<[number, number, number], number>(
      `select coalesce(sum(clicks), 0) from ${USER_HOURLY.table} where user_id = ? and hour_start >= ? and hour_start < ?`,
    ).pluck(),
    addUserHour: db.prepare<unknown[]>(upsertSql(USER_HOURLY)(rowsSql(upsertColumns(USER_HOURLY).length, 1))),
    userValues: dailyValueStatements(db, USER_DAILY_VALUES),
    linkRows: linkCountersWriter(db),
  };
}

type Statements = ReturnType<typeof prepareStatements>;
type ValueStatements = Statements['linkValues'];
type Known = ReadonlyMap<string, number>;

/**
 * Adds one group's values, capped. `storedAtMost`: a bound on the values stored for the group (its link's or
 * user's clicks so far; undefined when not at hand). Fewer than the cap leaves room for, even if every value is
 * new, and the cap cannot be reached: no count, no probes (uniform traffic over many links: most groups). The
 * distinct count then stays unknown, so it is not remembered; otherwise it is set in `counts` under `id`.
 */
function addCapped(
  s: ValueStatements, t: DailyValuesTable, owner: number, g: DailyValueGroup | UserDailyValueGroup,
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
function applyUserRollups(s: Statements, plan: RollupPlan, owners: ReadonlyMap<number, number | null>, known: Known, counts: DistinctCounts): void {
  const users = planUserRollups(plan, owners);
  // A (user, kind, day) holds at most as many values as the user's clicks that day, read before this
  // transaction adds its hours, for the groups whose distinct count is not remembered.
  const userDayBefore = new Map<string, number>();
  for (const g of users.daily) {
    const { userId, dayStart } = g.key;
    const day = `${userId}:${dayStart}`;
    if (!known.has(`u:${g.id}`) && !userDayBefore.has(day)) userDayBefore.set(day, s.userDayClicks.get(userId, dayStart, dayStart + DAY_MS)!);
  }
  for (const h of users.hours) s.addUserHour.run(USER_HOURLY.values(h));
  for (const g of users.daily) {
    const storedAtMost = userDayBefore.get(`${g.key.userId}:${g.key.dayStart}`);
    addCapped(s.userValues, USER_DAILY_VALUES, g.key.userId, g, { id: `u:${g.id}`, storedAtMost, known, counts });
  }
  s.userValues.rows.flush();
}

function applyPlan(s: Statements, clicks: readonly ClickEvent[], opts: { imported: boolean; known: Known }): DistinctCounts {
  const { known } = opts;
  const counts: DistinctCounts = new Map();
  const full = planRollups(clicks);
  const owners = new Map<number, number | null>();
  const clicksBefore = new Map<number, number>();
  for (const row of s.liveLinks(full.links.map((g) => g.linkId)).values()) {
    owners.set(row.id, row.user_id);
    clicksBefore.set(row.id, row.click_count);
  }
  const live = new Set(owners.keys());
  const plan = live.size === full.links.length ? full : planForLive(full, live);
  clicks.forEach((e, i) => {
    if (live.has(e.linkId)) s.clickRows.add(CLICK_RECORDS.values(e, full.facts[i]!, opts.imported));
  });
  s.clickRows.flush();
  for (const h of plan.hours) s.hourRows.add(LINK_HOURLY.values(h));
  s.hourRows.flush();
  const freshVisitors = new Map<number, number>();
  s.addVisitors(plan.visitors, freshVisitors);
  for (const g of plan.daily) addCapped(s.linkValues, LINK_DAILY_VALUES, g.key.linkId, g, { id: g.id, storedAtMost: clicksBefore.get(g.key.linkId), known, counts });
  // Each group's cap reads only its own (link, kind, day), which no other group of this plan writes.
  s.linkValues.rows.flush();
  applyUserRollups(s, plan, owners, known, counts);
  for (const g of plan.links) s.linkRows.add([g.linkId, ...LINK_COUNTERS.map((c) => c.value(g)), freshVisitors.get(g.linkId) ?? 0]);
  s.linkRows.flush();
  return counts;
}

export function createSqliteRollupWriter(db: BetterSqlite3.Database): SqliteRollupWriter {
  const s = prepareStatements(db);
  return {
    apply: (clicks, opts) => applyPlan(s, clicks, opts),
    discard() {
      for (const rows of [s.clickRows, s.hourRows, s.linkValues.rows, s.userValues.rows, s.linkRows]) rows.discard();
    },
  };
}

/**
 * Imported visits on the embedded engine: these statements on the main connection, inside the importer's
 * transaction (Kysely's, on this same handle, so its `tx` is not needed): prepared statements run a few µs per
 * row where a Kysely statement costs its compilation too. Prepared on first use, after the migrations.
 */
export function createImportedVisitsWriter(sqlite: BetterSqlite3.Database): (tx: unknown, batch: readonly ClickEvent[]) => Promise<void> {
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
