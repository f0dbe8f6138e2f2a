import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { MAIN_CONNECTION_AUTOCHECKPOINT_PAGES } from '../../db/sqlite-checkpointer.js';
import type { ClickEvent, ClickWriter } from '../../infra/click-queue.js';
import { dailyValueCounts, MAX_VALUES_PER_DAY, OTHER_VALUE, perHour, perLink, visitorPairs } from './click-rollups.js';

/**
 * The click writer on the embedded engine: the same rows as the portable writer in clicks.repository.ts,
 * written by a worker thread with its own better-sqlite3 connection.
 *
 * Why: better-sqlite3 is synchronous, so on the main thread a batch held the event loop for its whole
 * transaction, and most of that time was not CPU but the commit waiting for the disk (WAL writes next to
 * checkpoint fsyncs). Measured with bench/redirect.ts (100,000 links, uniformly random codes, 2-core VM):
 * through Kysely 40-70 ms per 1,000 clicks and a redirect p99 of 54 ms; with prepared statements on the
 * main thread still 60-75 µs of stalled loop per click. In a worker the redirect never waits for a
 * click write; SQLite's WAL lets the main connection read meanwhile.
 *
 * The main thread turns a batch into a plan (the pure functions of click-rollups.ts, as the portable
 * writer does) and posts it; the worker writes it in slices of SLICE clicks, one transaction each (records,
 * counters and rollups still move together), so that an API write on the main connection never waits for
 * the write lock longer than one slice. The cap on distinct daily values is applied in SQL here, value by
 * value, which gives the same result as capDailyValues().
 *
 * The worker is JavaScript evaluated from a string so that it runs unchanged under tsx, vitest and the
 * compiled build; it loads better-sqlite3 from the path resolved here.
 */
const SLICE = 200;

interface Plan {
  increments: Array<[linkId: number, clicks: number, firstAt: number, lastAt: number]>;
  events: Array<[linkId: number, shortCode: string, clickedAt: number, ip: string | null, userAgent: string | null, referrer: string | null]>;
  hourly: Array<[linkId: number, hourStart: number, clicks: number]>;
  visitors: Array<[linkId: number, ip: string]>;
  daily: Array<[linkId: number, kind: string, dayStart: number, value: string, clicks: number]>;
}

function planOf(batch: readonly ClickEvent[]): Plan {
  const daily: Plan['daily'] = [];
  for (const { key, values } of dailyValueCounts(batch).values()) {
    for (const [value, clicks] of values) daily.push([key.linkId, key.kind, key.dayStart, value, clicks]);
  }
  return {
    increments: [...perLink(batch).values()].map((g) => [g.linkId, g.clicks, g.firstAt, g.lastAt]),
    events: batch.map((e) => [e.linkId, e.shortCode, e.clickedAt, e.ip, e.userAgent, e.referrer]),
    hourly: perHour(batch).map((h) => [h.link_id, h.hour_start, h.clicks]),
    visitors: visitorPairs(batch).map((v) => [v.link_id, v.ip]),
    daily,
  };
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('wal_autocheckpoint = ' + workerData.autocheckpoint);
const { other, maxValues } = workerData;

const bump = db.prepare('update links set click_count = click_count + ?, first_click_at = min(coalesce(first_click_at, ?), ?), ' +
  'last_click_at = max(coalesce(last_click_at, ?), ?) where id = ? returning id');
const insertClick = db.prepare('insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer) values (?, ?, ?, ?, ?, ?)');
const addHour = db.prepare('insert into link_click_hourly (link_id, hour_start, clicks) values (?, ?, ?) ' +
  'on conflict (link_id, hour_start) do update set clicks = clicks + excluded.clicks');
const addVisitor = db.prepare('insert into link_visitors (link_id, ip) values (?, ?) on conflict do nothing');
const addUniques = db.prepare('update links set unique_visitors = unique_visitors + ? where id = ?');
// A value counts under its own name if it is already stored for that link, kind and day, or if fewer than
// maxValues names are stored; otherwise (changes = 0) under "other".
const addValue = db.prepare('insert into link_click_daily_values (link_id, kind, day_start, value, clicks) ' +
  'select @link, @kind, @day, @value, @clicks where exists (select 1 from link_click_daily_values ' +
  'where link_id = @link and kind = @kind and day_start = @day and value = @value) ' +
  'or (select count(*) from link_click_daily_values where link_id = @link and kind = @kind and day_start = @day and value <> @other) < @max ' +
  'on conflict (link_id, kind, day_start, value) do update set clicks = clicks + excluded.clicks');
const addOther = db.prepare('insert into link_click_daily_values (link_id, kind, day_start, value, clicks) values (?, ?, ?, ?, ?) ' +
  'on conflict (link_id, kind, day_start, value) do update set clicks = clicks + excluded.clicks');

const writeSlice = db.transaction((plan) => {
  const live = new Set();
  for (const [id, n, first, last] of plan.increments) if (bump.get(n, first, first, last, last, id)) live.add(id);
  for (const e of plan.events) if (live.has(e[0])) insertClick.run(e);
  for (const h of plan.hourly) if (live.has(h[0])) addHour.run(h);
  const fresh = new Map();
  for (const [id, ip] of plan.visitors) {
    if (live.has(id) && addVisitor.run(id, ip).changes > 0) fresh.set(id, (fresh.get(id) || 0) + 1);
  }
  for (const [id, n] of fresh) addUniques.run(n, id);
  for (const [link, kind, day, value, clicks] of plan.daily) {
    if (!live.has(link)) continue;
    const counted = value !== other && addValue.run({ link, kind, day, value, clicks, other, max: maxValues }).changes > 0;
    if (!counted) addOther.run(link, kind, day, other, clicks);
  }
});

parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.postMessage({ closed: true });
    return;
  }
  try {
    for (const plan of message.slices) writeSlice(plan);
    parentPort.postMessage({ id: message.id });
  } catch (err) {
    parentPort.postMessage({ id: message.id, error: String((err && err.message) || err) });
  }
});
`;

export interface ClosableClickWriter extends ClickWriter {
  close(): Promise<void>;
}

export function createSqliteClickWriter(file: string): ClosableClickWriter {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, file, autocheckpoint: MAIN_CONNECTION_AUTOCHECKPOINT_PAGES, other: OTHER_VALUE, maxValues: MAX_VALUES_PER_DAY },
  });
  // Idle, the worker must not keep the process alive; with writes in flight it must (a shutdown flush).
  worker.unref();
  const pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  let nextId = 0;
  let failure: Error | null = null;

  const settle = (id: number, error?: string) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    if (error === undefined) p.resolve();
    else p.reject(new Error(`click write failed: ${error}`));
  };
  worker.on('message', (m: { id?: number; error?: string }) => {
    if (m.id !== undefined) settle(m.id, m.error);
  });
  const fail = (err: Error) => {
    failure = err;
    for (const id of [...pending.keys()]) settle(id, err.message);
  };
  worker.on('error', fail);
  worker.on('exit', () => fail(failure ?? new Error('click writer stopped')));

  return {
    write(batch) {
      if (batch.length === 0) return Promise.resolve();
      if (failure) return Promise.reject(failure);
      const slices: Plan[] = [];
      for (let i = 0; i < batch.length; i += SLICE) slices.push(planOf(batch.slice(i, i + SLICE)));
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ id, slices });
      });
    },
    async close() {
      if (failure) return;
      const closed = new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.on('message', (m: { closed?: boolean }) => {
          if (m.closed) resolve();
        });
      });
      worker.ref();
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}
