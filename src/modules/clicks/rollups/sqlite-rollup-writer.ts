import type BetterSqlite3 from 'better-sqlite3';
import type { ClickEvent } from '../event/click-event.js';
import { DAY_MS, planForLive, planRollups, planUserRollups, type DailyValueGroup, type UserDailyValueGroup, type VisitorPair } from './rollup-plan.js';
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
  add(...row: unknown[]): void;
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
    add(...values) {
      for (const v of values) params.push(v);
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

/** The statements of one handle (prepared once: the tables must exist). */
function prepareStatements(db: BetterSqlite3.Database) {
  const insertRows = (head: string, columns: number, tail = '') => rowWriter(db, columns, (values) => `${head} values ${values} ${tail}`);

  const linkSql = (n: number) => `select id, user_id, click_count from links where id in (${Array(n).fill('?').join(', ')})`;
  const linkOne = db.prepare<[number], LinkRow>(linkSql(1));
  const linkMany = db.prepare<unknown[], LinkRow>(linkSql(ROWS_PER_STATEMENT));
  /** Each link's row (its owner, null: anonymous, and its clicks so far) for those that still exist: 32 per statement. */
  function liveLinks(ids: readonly number[]): Map<number, LinkRow> {
    const rows = new Map<number, LinkRow>();
    let i = 0;
    for (; i + ROWS_PER_STATEMENT <= ids.length; i += ROWS_PER_STATEMENT) for (const r of linkMany.all(ids.slice(i, i + ROWS_PER_STATEMENT))) rows.set(r.id, r);
    for (; i < ids.length; i += 1) {
      const r = linkOne.get(ids[i]!);
      if (r !== undefined) rows.set(r.id, r);
    }
    return rows;
  }

  const clickRows = insertRows('insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, click_key, is_bot, browser, os, device, country, imported, alias, domain)', 15);
  const hourRows = insertRows(
    'insert into link_click_hourly (link_id, hour_start, clicks, bots)', 4,
    'on conflict (link_id, hour_start) do update set clicks = clicks + excluded.clicks, bots = bots + excluded.bots',
  );
  // A user's clicks on a UTC day so far (every hour of it): the bound of the values stored for that day.
  const userDayClicks = db.prepare<[number, number, number], number>(
    'select coalesce(sum(clicks), 0) from user_click_hourly where user_id = ? and hour_start >= ? and hour_start < ?',
  ).pluck();
  const addUserHour = db.prepare<[number, number, number, number]>(
    'insert into user_click_hourly (user_id, hour_start, clicks, bots) values (?, ?, ?, ?) ' +
      'on conflict (user_id, hour_start) do update set clicks = clicks + excluded.clicks, bots = bots + excluded.bots',
  );
  const countUserValues = db.prepare<[number, string, number, string], number>(
    'select count(*) from user_click_daily_values where user_id = ? and kind = ? and day_start = ? and value <> ?',
  ).pluck();
  const userValueStored = db.prepare<[number, string, number, string], number>(
    'select 1 from user_click_daily_values where user_id = ? and kind = ? and day_start = ? and value = ?',
  ).pluck();
  const userValueRows = insertRows(
    'insert into user_click_daily_values (user_id, kind, day_start, value, clicks)', 5,
    'on conflict (user_id, kind, day_start, value) do update set clicks = clicks + excluded.clicks',
  );
  /**
   * A link's new visitors, for `changes` (a visitor already stored changes nothing): one statement per link and
   * up to 32 visitors, so that `changes` is that link's. (One statement across links with RETURNING measured no
   * faster than one per visitor: 1.58–1.74 against 1.69–1.82 µs per row.)
   */
  const visitorStatements: Array<{ run(params: unknown[]): { changes: number } }> = [];
  const visitorsOf = (n: number) => (visitorStatements[n] ??= db.prepare<unknown[]>(`insert into link_visitors (link_id, ip) values ${rowsSql(2, n)} on conflict do nothing`));
  function addVisitors(visitors: readonly VisitorPair[], fresh: Map<number, number>): void {
    for (let i = 0; i < visitors.length; ) {
      const linkId = visitors[i]!.linkId;
      const params: unknown[] = [];
      let n = 0;
      for (; i < visitors.length && visitors[i]!.linkId === linkId && n < ROWS_PER_STATEMENT; i += 1, n += 1) params.push(linkId, visitors[i]!.ip);
      const added = visitorsOf(n).run(params).changes;
      if (added > 0) fresh.set(linkId, (fresh.get(linkId) ?? 0) + added);
    }
  }
  const countValues = db.prepare<[number, string, number, string], number>(
    'select count(*) from link_click_daily_values where link_id = ? and kind = ? and day_start = ? and value <> ?',
  ).pluck();
  const valueStored = db.prepare<[number, string, number, string], number>(
    'select 1 from link_click_daily_values where link_id = ? and kind = ? and day_start = ? and value = ?',
  ).pluck();
  const valueRows = insertRows(
    'insert into link_click_daily_values (link_id, kind, day_start, value, clicks)', 5,
    'on conflict (link_id, kind, day_start, value) do update set clicks = clicks + excluded.clicks',
  );
  // The links' counters: one UPDATE … FROM (VALUES …) per 32 links (a search by rowid each).
  const linkRows = rowWriter(db, 6, (values) =>
    'update links set click_count = click_count + v.column2, bot_clicks = bot_clicks + v.column3, unique_visitors = unique_visitors + v.column4, ' +
      'first_click_at = min(coalesce(first_click_at, v.column5), v.column5), last_click_at = max(coalesce(last_click_at, v.column6), v.column6) ' +
      `from (values ${values}) as v where links.id = v.column1`);

  return { liveLinks, clickRows, hourRows, addVisitors, countValues, valueStored, valueRows, userDayClicks, addUserHour, countUserValues, userValueStored, userValueRows, linkRows };
}

type Statements = ReturnType<typeof prepareStatements>;

function applyPlan(s: Statements, clicks: readonly ClickEvent[], opts: { imported: boolean; known: ReadonlyMap<string, number> }): DistinctCounts {
  const { liveLinks, clickRows, hourRows, addVisitors, countValues, valueStored, valueRows, userDayClicks, addUserHour, countUserValues, userValueStored, userValueRows, linkRows } = s;
  const { known } = opts;
  const counts: DistinctCounts = new Map();
  const full = planRollups(clicks);
  const owners = new Map<number, number | null>();
  const clicksBefore = new Map<number, number>();
  for (const row of liveLinks(full.links.map((g) => g.linkId)).values()) {
    owners.set(row.id, row.user_id);
    clicksBefore.set(row.id, row.click_count);
  }
  const live = new Set(owners.keys());
  const plan = live.size === full.links.length ? full : planForLive(full, live);
  const imported = opts.imported ? 1 : 0;
  clicks.forEach((e, i) => {
    if (!live.has(e.linkId)) return;
    const f = full.facts[i]!;
    clickRows.add(e.linkId, e.shortCode, e.clickedAt, e.ip, e.userAgent, e.referrer, e.key ?? null, f.isBot ? 1 : 0, f.browser, f.os, f.device, f.country, imported, e.alias ?? null, e.domain ?? null);
  });
  clickRows.flush();
  for (const h of plan.hours) hourRows.add(h.linkId, h.hourStart, h.clicks, h.bots);
  hourRows.flush();
  const freshVisitors = new Map<number, number>();
  addVisitors(plan.visitors, freshVisitors);
  /**
   * `storedAtMost`: a bound on the values stored for the group (its link's or user's clicks so far; undefined
   * when not at hand). Fewer than the cap leaves room for, even if every value is new, and the cap cannot be
   * reached: no count, no probes (uniform traffic over many links: most groups). The distinct count then
   * stays unknown, so it is not remembered.
   */
  const capInto = (g: DailyValueGroup | UserDailyValueGroup, id: string, storedAtMost: number | undefined, count: () => number, stored: (v: string) => boolean, add: (v: string, n: number) => void) => {
    if (storedAtMost !== undefined && !known.has(id) && storedAtMost + g.values.size <= MAX_VALUES_PER_DAY) {
      for (const [value, n] of g.values) add(value, n);
      return;
    }
    const capped = capDailyGroup(g, known.get(id) ?? count(), stored);
    for (const [value, n] of capped.rows) add(value, n);
    counts.set(id, capped.distinct);
  };
  for (const g of plan.daily) {
    const { linkId, kind, dayStart } = g.key;
    capInto(g, g.id, clicksBefore.get(linkId), () => countValues.get(linkId, kind, dayStart, OTHER_VALUE)!, (value) => valueStored.get(linkId, kind, dayStart, value) !== undefined,
      (value, n) => valueRows.add(linkId, kind, dayStart, value, n));
  }
  // Each group's cap reads only its own (link, kind, day), which no other group of this plan writes.
  valueRows.flush();
  const users = planUserRollups(plan, owners);
  // A (user, kind, day) holds at most as many values as the user's clicks that day, read before this
  // transaction adds its hours, for the groups whose distinct count is not remembered.
  const userDayBefore = new Map<string, number>();
  for (const g of users.daily) {
    const { userId, dayStart } = g.key;
    const day = `${userId}:${dayStart}`;
    if (!known.has(`u:${g.id}`) && !userDayBefore.has(day)) userDayBefore.set(day, userDayClicks.get(userId, dayStart, dayStart + DAY_MS)!);
  }
  for (const h of users.hours) addUserHour.run(h.userId, h.hourStart, h.clicks, h.bots);
  for (const g of users.daily) {
    const { userId, kind, dayStart } = g.key;
    capInto(g, `u:${g.id}`, userDayBefore.get(`${userId}:${dayStart}`), () => countUserValues.get(userId, kind, dayStart, OTHER_VALUE)!, (value) => userValueStored.get(userId, kind, dayStart, value) !== undefined,
      (value, n) => userValueRows.add(userId, kind, dayStart, value, n));
  }
  userValueRows.flush();
  for (const g of plan.links) linkRows.add(g.linkId, g.clicks, g.bots, freshVisitors.get(g.linkId) ?? 0, g.firstAt, g.lastAt);
  linkRows.flush();
  return counts;
}


export function createSqliteRollupWriter(db: BetterSqlite3.Database): SqliteRollupWriter {
  const s = prepareStatements(db);
  return {
    apply: (clicks, opts) => applyPlan(s, clicks, opts),
    discard() {
      for (const rows of [s.clickRows, s.hourRows, s.valueRows, s.userValueRows, s.linkRows]) rows.discard();
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
