import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteDatabase as Database } from '../../../db/sqlite-driver.js';
import { eventsOfMessage, type ClickBatchMessage, type WindowProgress } from './click-batch.js';
import type { ClickEvent } from '../event/click-event.js';
import type { JournalMark } from './click-writer.js';
import { DAY_MS, planForLive, planRollups, planUserRollups, type DailyValueGroup, type UserDailyValueGroup, type VisitorPair } from './rollup-plan.js';
import { capDailyGroup, MAX_VALUES_PER_DAY, OTHER_VALUE } from './daily-values.js';

/**
 * The click writer thread of sqlite-click-writer.ts: a module of its own (typed, linted), loaded compiled
 * from dist, or through tsx from the sources (tests, `npm run dev`, bench).
 *
 * A message is one window of clicks (up to sqlite-click-writer.ts's WINDOW_CLICKS, all the queue held). The
 * thread sorts it by link (then in queue order) and cuts it into transactions of about `budgetMs`; each
 * applies rollup-plan.ts's plan: the click records, the link's counters (one UPDATE per link), the hourly
 * rollup, the visitor set and the daily values, capped at MAX_VALUES_PER_DAY distinct values per link, day
 * and kind. Clicks of a link deleted meanwhile are dropped, like the records a delete cascades away.
 *
 * Measured costs it is shaped by (bench/): a statement is a few µs, a commit costs per page it dirties. Sorted
 * by link, the transactions of a window dirty each page about once for all of the window's clicks on it,
 * where unsorted transactions dirtied about five random pages per click (uniform traffic over 100,000 links:
 * 63 → 32 µs of CPU per click at 50,000 per window). The number of distinct values already stored per link,
 * day and kind is remembered between transactions instead of being counted every time.
 *
 * Exactly once with the click journal: a window's transactions commit link ranges, not a prefix of the
 * journal, so until its last one each moves the mark's window columns (migration 013): the window's end, and
 * the link (and how many of its clicks, in queue order) it is committed through. The last one moves
 * `committed` to the window's end and clears them. A failed transaction answers how far the window got;
 * the batch drops that part and is written again alone (memory-click-queue.ts). Foreign keys are not checked on
 * this connection: every row written belongs to a link whose row this same transaction has just read under
 * the write lock, which is the check.
 */
export interface SqliteClickThreadData {
  file: string;
  autocheckpoint: number;
  budgetMs: number;
  nice: number;
}

export type SqliteClickThreadRequest = 'close' | { id: number; batch: ClickBatchMessage; mark?: JournalMark };
/** `written`: on an error, the part of the batch committed before it (ClickBatch.dropWritten), if any. */
export type SqliteClickThreadReply = { closed: true } | { id: number; error?: string; written?: WindowProgress };

const data = workerData as SqliteClickThreadData;
const port = parentPort!;

// Linux: a thread's own id names it for setpriority(), so only this thread yields to the event loop.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), data.nice);
} catch {
  // elsewhere: same priority
}

const db = new Database(data.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = OFF');
db.pragma('cache_size = -16384');
db.pragma(`wal_autocheckpoint = ${data.autocheckpoint}`);

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
/** `statement`: the SQL around a VALUES list of `columns` per row (an INSERT, or an UPDATE … FROM (VALUES …)). */
function rowWriter(columns: number, statement: (values: string) => string): { add(...row: unknown[]): void; flush(): void; discard(): void } {
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
    /** forgets rows added but not written (a failed transaction) */
    discard() {
      params = [];
    },
  };
}
const insertRows = (head: string, columns: number, tail = '') => rowWriter(columns, (values) => `${head} values ${values} ${tail}`);

type LinkRow = { id: number; user_id: number | null; click_count: number };
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

const clickRows = insertRows('insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, click_key, is_bot, browser, os, device, country)', 12);
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
const addUserValue = db.prepare<[number, string, number, string, number]>(
  'insert into user_click_daily_values (user_id, kind, day_start, value, clicks) values (?, ?, ?, ?, ?) ' +
    'on conflict (user_id, kind, day_start, value) do update set clicks = clicks + excluded.clicks',
);
// data_fresh_as_of: this writer's latest flush (one row per writer, forgotten never: a few bytes each).
const markFresh = db.prepare<[string, number]>(
  'insert into click_ingest (writer, fresh_as_of) values (?, ?) on conflict (writer) do update set fresh_as_of = max(fresh_as_of, excluded.fresh_as_of)',
);
// The click journal's mark (click-journal.ts): how far its clicks are committed, in the same transaction.
const markJournal = db.prepare<[string, number, number | null, number | null, number | null]>(
  'insert into click_journal_marks (journal, committed, window_end, window_link, window_count) values (?, ?, ?, ?, ?) ' +
    'on conflict (journal) do update set committed = max(committed, excluded.committed), ' +
    'window_end = excluded.window_end, window_link = excluded.window_link, window_count = excluded.window_count',
);
const writerName = `sqlite:${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
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
const linkRows = rowWriter(6, (values) =>
  'update links set click_count = click_count + v.column2, bot_clicks = bot_clicks + v.column3, unique_visitors = unique_visitors + v.column4, ' +
    'first_click_at = min(coalesce(first_click_at, v.column5), v.column5), last_click_at = max(coalesce(last_click_at, v.column6), v.column6) ' +
    `from (values ${values}) as v where links.id = v.column1`);
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');
const rollback = db.prepare('rollback');

/** Distinct values stored per "link:kind:day" and "u:user:kind:day" (committed state only); bounded, forgotten wholesale. */
let valueCounts = new Map<string, number>();
const VALUE_COUNTS_REMEMBERED = 200_000;

/** The journal's mark as a transaction leaves it: a window partly written, or (window null) done through `committed`. */
interface MarkUpdate {
  journal: string;
  committed: number;
  window: (WindowProgress & { end: number }) | null;
}

/**
 * One transaction: `clicks`, the journal's mark moved as `mark` says, and with `fresh`, this writer's
 * data_fresh_as_of. Returns the value counts to remember once it has committed.
 */
function write(clicks: readonly ClickEvent[], mark: MarkUpdate | null, fresh: number | null): Map<string, number> {
  const counts = new Map<string, number>();
  begin.run();
  try {
    const full = planRollups(clicks);
    const owners = new Map<number, number | null>();
    const clicksBefore = new Map<number, number>();
    for (const row of liveLinks(full.links.map((g) => g.linkId)).values()) {
      owners.set(row.id, row.user_id);
      clicksBefore.set(row.id, row.click_count);
    }
    const live = new Set(owners.keys());
    const plan = live.size === full.links.length ? full : planForLive(full, live);
    clicks.forEach((e, i) => {
      if (!live.has(e.linkId)) return;
      const f = full.facts[i]!;
      clickRows.add(e.linkId, e.shortCode, e.clickedAt, e.ip, e.userAgent, e.referrer, e.key ?? null, f.isBot ? 1 : 0, f.browser, f.os, f.device, f.country);
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
      if (storedAtMost !== undefined && !valueCounts.has(id) && storedAtMost + g.values.size <= MAX_VALUES_PER_DAY) {
        for (const [value, n] of g.values) add(value, n);
        return;
      }
      const capped = capDailyGroup(g, valueCounts.get(id) ?? count(), stored);
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
      if (!valueCounts.has(`u:${g.id}`) && !userDayBefore.has(day)) userDayBefore.set(day, userDayClicks.get(userId, dayStart, dayStart + DAY_MS)!);
    }
    for (const h of users.hours) addUserHour.run(h.userId, h.hourStart, h.clicks, h.bots);
    for (const g of users.daily) {
      const { userId, kind, dayStart } = g.key;
      capInto(g, `u:${g.id}`, userDayBefore.get(`${userId}:${dayStart}`), () => countUserValues.get(userId, kind, dayStart, OTHER_VALUE)!, (value) => userValueStored.get(userId, kind, dayStart, value) !== undefined,
        (value, n) => addUserValue.run(userId, kind, dayStart, value, n));
    }
    for (const g of plan.links) linkRows.add(g.linkId, g.clicks, g.bots, freshVisitors.get(g.linkId) ?? 0, g.firstAt, g.lastAt);
    linkRows.flush();
    if (fresh !== null) markFresh.run(writerName, fresh);
    if (mark) markJournal.run(mark.journal, mark.committed, mark.window?.end ?? null, mark.window?.link ?? null, mark.window?.count ?? null);
    commit.run();
  } catch (err) {
    for (const rows of [clickRows, hourRows, valueRows, linkRows]) rows.discard();
    if (db.inTransaction) rollback.run();
    throw err;
  }
  return counts;
}

const pause = new Int32Array(new SharedArrayBuffer(4));
let perClickMs = 0.05;

port.on('message', (message: SqliteClickThreadRequest) => {
  if (message === 'close') {
    db.close();
    port.postMessage({ closed: true } satisfies SqliteClickThreadReply);
    return;
  }
  const { batch, mark } = message;
  // By link, then in queue order: a link's clicks stay in order, and a transaction ends inside a link only
  // when that link alone is more than a transaction's worth. Sorted as indexes into the columns: a window's
  // clicks become objects one transaction at a time.
  const links = batch.numbers.linkId;
  const order = new Uint32Array(batch.length).map((_, i) => i).sort((a, b) => links[a]! - links[b]! || a - b);
  // data_fresh_as_of: the window's latest click, once all of it is committed (unless held: a replay is running).
  const fresh = mark?.holdFresh ? null : batch.numbers.clickedAt.reduce((latest, at) => Math.max(latest, at), 0);
  let done = 0;
  // how far the window got: its clicks of links below `link` and `count` of `link` (in this message)
  let written: WindowProgress | undefined;
  try {
    while (done < order.length) {
      if (done > 0) Atomics.wait(pause, 0, 0, 2); // room for the main connection's writes
      const size = Math.min(order.length - done, Math.max(50, Math.round(data.budgetMs / perClickMs)));
      const chunk = eventsOfMessage(batch, order.subarray(done, done + size));
      const last = chunk[chunk.length - 1]!.linkId;
      let count = written?.link === last ? written.count : 0;
      for (const e of chunk) if (e.linkId === last) count += 1;
      const final = done + size === order.length;
      const before = mark?.after?.link === last ? mark.after.count : 0;
      const update: MarkUpdate | null = !mark ? null : final
        ? { journal: mark.journal, committed: mark.end, window: null }
        : { journal: mark.journal, committed: mark.first, window: { end: mark.end, link: last, count: before + count } };
      const started = performance.now();
      const counts = write(chunk, update, final ? fresh : null);
      perClickMs = Math.max(0.002, (performance.now() - started) / size);
      if (valueCounts.size + counts.size > VALUE_COUNTS_REMEMBERED) valueCounts = new Map();
      for (const [key, n] of counts) valueCounts.set(key, n);
      done += size;
      written = { link: last, count };
    }
    port.postMessage({ id: message.id } satisfies SqliteClickThreadReply);
  } catch (err) {
    valueCounts = new Map();
    port.postMessage({ id: message.id, error: String((err as Error | undefined)?.message ?? err), ...(written ? { written } : {}) } satisfies SqliteClickThreadReply);
  }
});
