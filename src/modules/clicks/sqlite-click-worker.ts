/**
 * The click writer thread of sqlite-click-writer.ts, as JavaScript evaluated from a string so that it runs
 * unchanged under tsx, vitest and the compiled build (it loads better-sqlite3 from the path it is given).
 *
 * A message is one ClickBatch in columns. The worker cuts it into transactions of about `budgetMs` and, for
 * each, groups the clicks as click-rollups.ts does (per link; per link and hour; distinct (link, ip); per
 * link, day and kind, the referrer origins and user agents) and writes, in one transaction: the click
 * records, the link's counters (one UPDATE per link), the hourly rollup, the visitor set and the daily
 * values, capped at `maxValues` distinct values per link, day and kind (the rest counts as "(other)").
 * Clicks of a link deleted meanwhile are dropped, like the records a delete cascades away.
 *
 * Measured costs it is shaped by (bench/): a statement is a few µs, a commit costs per page it dirties, so
 * the statements run in key order and the number of distinct values already stored per link, day and
 * kind is remembered between transactions instead of being counted every time. Foreign keys are not
 * checked on this connection: every row written belongs to a link whose row this same transaction has
 * just read under the write lock, which is the check.
 */
export const SQLITE_CLICK_WORKER = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const { readlinkSync } = require('node:fs');
const { setPriority } = require('node:os');
const { other, maxValues, hourMs, dayMs, budgetMs } = workerData;

// Linux: a thread's own id names it for setpriority(), so only this thread yields to the event loop.
try { setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), workerData.nice); } catch { /* elsewhere: same priority */ }

const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = OFF');
db.pragma('cache_size = -16384');
db.pragma('wal_autocheckpoint = ' + workerData.autocheckpoint);

const liveLink = db.prepare('select 1 from links where id = ?').pluck();
const insertClick = db.prepare('insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer) values (?, ?, ?, ?, ?, ?)');
const addHour = db.prepare('insert into link_click_hourly (link_id, hour_start, clicks) values (?, ?, ?) ' +
  'on conflict (link_id, hour_start) do update set clicks = clicks + excluded.clicks');
const addVisitor = db.prepare('insert into link_visitors (link_id, ip) values (?, ?) on conflict do nothing');
const countValues = db.prepare('select count(*) from link_click_daily_values where link_id = ? and kind = ? and day_start = ? and value <> ?').pluck();
// Returns the row's clicks afterwards: equal to what was added when the value is new.
const upsertValue = db.prepare('insert into link_click_daily_values (link_id, kind, day_start, value, clicks) values (?, ?, ?, ?, ?) ' +
  'on conflict (link_id, kind, day_start, value) do update set clicks = clicks + excluded.clicks returning clicks').pluck();
const addToValue = db.prepare('update link_click_daily_values set clicks = clicks + ? where link_id = ? and kind = ? and day_start = ? and value = ?');
const bumpLink = db.prepare('update links set click_count = click_count + ?, unique_visitors = unique_visitors + ?, ' +
  'first_click_at = min(coalesce(first_click_at, ?), ?), last_click_at = max(coalesce(last_click_at, ?), ?) where id = ?');
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');
const rollback = db.prepare('rollback');

// Distinct values stored per "link:kind:day" (committed state only); bounded, forgotten wholesale.
let valueCounts = new Map();
// Referrer as sent -> the value counted (its origin); bounded likewise.
let origins = new Map();

function referrerValue(referrer) {
  let v = origins.get(referrer);
  if (v !== undefined) return v;
  v = referrer.slice(0, 255);
  try {
    const u = new URL(referrer);
    if (u.protocol === 'http:' || u.protocol === 'https:') v = u.origin.slice(0, 255);
  } catch { /* not a URL: the text */ }
  if (origins.size >= 10000) origins = new Map();
  origins.set(referrer, v);
  return v;
}

const byFirst = (a, b) => a[0] - b[0];

/** Groups clicks [from, to) of a batch into what one transaction writes. */
function plan(m, from, to) {
  const links = new Map();
  const hours = new Map();
  const visitors = new Map();
  const daily = new Map();
  const addValue = (id, kind, day, value) => {
    const key = id + ':' + kind + ':' + day;
    let g = daily.get(key);
    if (g === undefined) daily.set(key, (g = [id, kind, day, key, new Map()]));
    g[4].set(value, (g[4].get(value) || 0) + 1);
  };
  for (let i = from; i < to; i += 1) {
    const id = m.linkId[i];
    const at = m.clickedAt[i];
    const g = links.get(id);
    if (g === undefined) links.set(id, [id, 1, at, at, 0]);
    else { g[1] += 1; if (at < g[2]) g[2] = at; if (at > g[3]) g[3] = at; }
    const hour = Math.floor(at / hourMs) * hourMs;
    const hk = id + ':' + hour;
    const h = hours.get(hk);
    if (h === undefined) hours.set(hk, [id, hour, 1]); else h[2] += 1;
    const ip = m.ip[i];
    if (ip) visitors.set(id + ' ' + ip, [id, ip]);
    const day = Math.floor(at / dayMs) * dayMs;
    // As click-rollups.ts: an empty referrer or user agent counts as none.
    const ref = m.referrer[i] < 0 ? '' : m.values[m.referrer[i]];
    if (ref !== '') addValue(id, 'referrer', day, referrerValue(ref));
    const ua = m.userAgent[i] < 0 ? '' : m.values[m.userAgent[i]];
    if (ua !== '') addValue(id, 'user_agent', day, ua.slice(0, 255));
  }
  return {
    links: [...links.values()].sort(byFirst),
    hours: [...hours.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]),
    visitors: [...visitors.values()].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1)),
    daily: [...daily.values()].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1) || a[2] - b[2]),
  };
}

/** One transaction: clicks [from, to). Returns the value counts to remember once it has committed. */
function write(m, from, to) {
  const p = plan(m, from, to);
  const live = new Map();
  const counts = new Map();
  begin.run();
  try {
    for (const g of p.links) if (liveLink.get(g[0]) !== undefined) live.set(g[0], g);
    for (let i = from; i < to; i += 1) {
      if (!live.has(m.linkId[i])) continue;
      const ua = m.userAgent[i];
      const ref = m.referrer[i];
      insertClick.run(m.linkId[i], m.shortCode[i], m.clickedAt[i], m.ip[i], ua < 0 ? null : m.values[ua], ref < 0 ? null : m.values[ref]);
    }
    for (const h of p.hours) if (live.has(h[0])) addHour.run(h[0], h[1], h[2]);
    for (const v of p.visitors) {
      const g = live.get(v[0]);
      if (g !== undefined && addVisitor.run(v[0], v[1]).changes > 0) g[4] += 1;
    }
    for (const [id, kind, day, key, values] of p.daily) {
      if (!live.has(id)) continue;
      let n = valueCounts.get(key);
      if (n === undefined) n = countValues.get(id, kind, day, other);
      let rest = 0;
      for (const [value, clicks] of values) {
        if (value === other) rest += clicks;
        else if (n < maxValues) { if (upsertValue.get(id, kind, day, value, clicks) === clicks) n += 1; }
        else if (addToValue.run(clicks, id, kind, day, value).changes === 0) rest += clicks;
      }
      if (rest > 0) upsertValue.get(id, kind, day, other, rest);
      counts.set(key, n);
    }
    for (const g of live.values()) bumpLink.run(g[1], g[4], g[2], g[2], g[3], g[3], g[0]);
    commit.run();
  } catch (err) {
    if (db.inTransaction) rollback.run();
    throw err;
  }
  return counts;
}

const pause = new Int32Array(new SharedArrayBuffer(4));
let perClickMs = 0.05;

parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.postMessage({ closed: true });
    return;
  }
  const m = message.batch;
  let done = 0;
  try {
    while (done < m.length) {
      if (done > 0) Atomics.wait(pause, 0, 0, 2); // room for the main connection's writes
      const size = Math.min(m.length - done, Math.max(50, Math.round(budgetMs / perClickMs)));
      const started = performance.now();
      const counts = write(m, done, done + size);
      perClickMs = Math.max(0.002, (performance.now() - started) / size);
      if (valueCounts.size + counts.size > 200000) valueCounts = new Map();
      for (const [key, n] of counts) valueCounts.set(key, n);
      done += size;
    }
    parentPort.postMessage({ id: message.id });
  } catch (err) {
    valueCounts = new Map();
    parentPort.postMessage({ id: message.id, error: String((err && err.message) || err), committed: done });
  }
});
`;
