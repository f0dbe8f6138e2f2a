import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteDatabase as Database } from '../../db/sqlite-driver.js';
import { eventsOfMessage, type ClickBatchMessage } from './click-batch.js';
import type { ClickEvent } from './click-event.js';
import type { JournalMark } from './click-queue.js';
import { capDailyGroup, DAY_MS, freshAsOf, MAX_VALUES_PER_DAY, OTHER_VALUE, planForLive, planRollups, planUserRollups, type DailyValueGroup, type UserDailyValueGroup } from './click-rollups.js';

/**
 * The click writer thread of sqlite-click-writer.ts: a module of its own (typed, linted), loaded compiled
 * from dist, or through tsx from the sources (tests, `npm run dev`, bench).
 *
 * A message is one ClickBatch in columns. The thread cuts it into transactions of about `budgetMs` and, for
 * each, applies click-rollups.ts's plan in one transaction: the click records, the link's counters (one
 * UPDATE per link), the hourly rollup, the visitor set and the daily values, capped at MAX_VALUES_PER_DAY
 * distinct values per link, day and kind. Clicks of a link deleted meanwhile are dropped, like the records a
 * delete cascades away.
 *
 * Measured costs it is shaped by (bench/): a statement is a few µs, a commit costs per page it dirties, so
 * the statements run in key order and the number of distinct values already stored per link, day and kind
 * is remembered between transactions instead of being counted every time. Foreign keys are not checked on
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
export type SqliteClickThreadReply = { closed: true } | { id: number; error?: string; committed?: number };

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

// The link's owner (null: anonymous) and its clicks so far, or undefined when the link is gone.
const linkRow = db.prepare<[number], { user_id: number | null; click_count: number }>('select user_id, click_count from links where id = ?');
const insertClick = db.prepare<[number, string, number, string | null, string | null, string | null, string | null, number, string | null, string | null, string, string | null]>(
  'insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, click_key, is_bot, browser, os, device, country) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
);
const addHour = db.prepare<[number, number, number, number]>(
  'insert into link_click_hourly (link_id, hour_start, clicks, bots) values (?, ?, ?, ?) ' +
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
// The click journal's mark (click-journal.ts): how many of its clicks are committed, in the same transaction.
const markJournal = db.prepare<[string, number]>(
  'insert into click_journal_marks (journal, committed) values (?, ?) on conflict (journal) do update set committed = max(committed, excluded.committed)',
);
const writerName = `sqlite:${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
const addVisitor = db.prepare<[number, string]>('insert into link_visitors (link_id, ip) values (?, ?) on conflict do nothing');
const countValues = db.prepare<[number, string, number, string], number>(
  'select count(*) from link_click_daily_values where link_id = ? and kind = ? and day_start = ? and value <> ?',
).pluck();
const valueStored = db.prepare<[number, string, number, string], number>(
  'select 1 from link_click_daily_values where link_id = ? and kind = ? and day_start = ? and value = ?',
).pluck();
const addValue = db.prepare<[number, string, number, string, number]>(
  'insert into link_click_daily_values (link_id, kind, day_start, value, clicks) values (?, ?, ?, ?, ?) ' +
    'on conflict (link_id, kind, day_start, value) do update set clicks = clicks + excluded.clicks',
);
const bumpLink = db.prepare<[number, number, number, number, number, number, number, number]>(
  'update links set click_count = click_count + ?, bot_clicks = bot_clicks + ?, unique_visitors = unique_visitors + ?, ' +
    'first_click_at = min(coalesce(first_click_at, ?), ?), last_click_at = max(coalesce(last_click_at, ?), ?) where id = ?',
);
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');
const rollback = db.prepare('rollback');

/** Distinct values stored per "link:kind:day" and "u:user:kind:day" (committed state only); bounded, forgotten wholesale. */
let valueCounts = new Map<string, number>();
const VALUE_COUNTS_REMEMBERED = 200_000;

/**
 * One transaction: `clicks`, and with `committedThrough`, the journal's mark moved to it. Returns the value
 * counts to remember once it has committed.
 */
function write(clicks: readonly ClickEvent[], committedThrough: { journal: string; committed: number } | null): Map<string, number> {
  const counts = new Map<string, number>();
  begin.run();
  try {
    const full = planRollups(clicks);
    const owners = new Map<number, number | null>();
    const clicksBefore = new Map<number, number>();
    for (const g of full.links) {
      const row = linkRow.get(g.linkId);
      if (row === undefined) continue;
      owners.set(g.linkId, row.user_id);
      clicksBefore.set(g.linkId, row.click_count);
    }
    const live = new Set(owners.keys());
    const plan = live.size === full.links.length ? full : planForLive(full, live);
    clicks.forEach((e, i) => {
      if (!live.has(e.linkId)) return;
      const f = full.facts[i]!;
      insertClick.run(e.linkId, e.shortCode, e.clickedAt, e.ip, e.userAgent, e.referrer, e.key ?? null, f.isBot ? 1 : 0, f.browser, f.os, f.device, f.country);
    });
    for (const h of plan.hours) addHour.run(h.linkId, h.hourStart, h.clicks, h.bots);
    const freshVisitors = new Map<number, number>();
    for (const v of plan.visitors) {
      if (addVisitor.run(v.linkId, v.ip).changes > 0) freshVisitors.set(v.linkId, (freshVisitors.get(v.linkId) ?? 0) + 1);
    }
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
        (value, n) => addValue.run(linkId, kind, dayStart, value, n));
    }
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
    for (const g of plan.links) bumpLink.run(g.clicks, g.bots, freshVisitors.get(g.linkId) ?? 0, g.firstAt, g.firstAt, g.lastAt, g.lastAt, g.linkId);
    markFresh.run(writerName, freshAsOf(full));
    if (committedThrough) markJournal.run(committedThrough.journal, committedThrough.committed);
    commit.run();
  } catch (err) {
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
  const clicks = eventsOfMessage(message.batch);
  let done = 0;
  try {
    while (done < clicks.length) {
      if (done > 0) Atomics.wait(pause, 0, 0, 2); // room for the main connection's writes
      const size = Math.min(clicks.length - done, Math.max(50, Math.round(data.budgetMs / perClickMs)));
      const started = performance.now();
      const mark = message.mark ? { journal: message.mark.journal, committed: message.mark.first + done + size } : null;
      const counts = write(clicks.slice(done, done + size), mark);
      perClickMs = Math.max(0.002, (performance.now() - started) / size);
      if (valueCounts.size + counts.size > VALUE_COUNTS_REMEMBERED) valueCounts = new Map();
      for (const [key, n] of counts) valueCounts.set(key, n);
      done += size;
    }
    port.postMessage({ id: message.id } satisfies SqliteClickThreadReply);
  } catch (err) {
    valueCounts = new Map();
    port.postMessage({ id: message.id, error: String((err as Error | undefined)?.message ?? err), committed: done } satisfies SqliteClickThreadReply);
  }
});
