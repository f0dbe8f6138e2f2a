import type SQLite from 'better-sqlite3';
import { sql, type Kysely, type Transaction } from 'kysely';
import { outsideKyselyTransaction, type Storage } from '../../db/database.js';
import type { Database } from '../../db/types.js';
import type { ClickEvent, ClickWriter } from '../../infra/click-queue.js';
import { capDailyValues, dailyKeyId, dailyValueCounts, perHour, perLink, visitorPairs, type LinkIncrement } from './click-rollups.js';
import { createSqliteClickWriter } from './sqlite-click-writer.js';

type Tx = Transaction<Database>;

/** Rows per multi-row statement: well below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const CHUNK = 500;

const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

export type ClicksRepository = ReturnType<typeof createClicksRepository>;

/**
 * Click records and rollups. `writer` persists a batch: on PostgreSQL through Kysely below, on the embedded
 * engine in a worker thread (sqlite-click-writer.ts: same rows; see there why). Reads are Kysely, except the
 * statistics' two reads on the embedded engine (prepared, below).
 */
export function createClicksRepository(storage: Pick<Storage, 'db' | 'sqlite'>) {
  const db: Kysely<Database> = storage.db;
  /**
   * Adds to click_count and moves first/last click, and tells which links still exist. The UPDATE takes the
   * row lock on PostgreSQL, so a link deleted meanwhile either waits for this transaction or is already gone
   * (its clicks are dropped with it, like the clicks a delete cascades away).
   */
  async function bumpLinks(tx: Tx, increments: LinkIncrement[]): Promise<Set<number>> {
    const live = new Set<number>();
    const sorted = [...increments].sort((a, b) => a.linkId - b.linkId);
    for (const part of chunks(sorted)) {
      const values = sql.join(part.map((g) => sql`(cast(${g.linkId} as bigint), cast(${g.clicks} as bigint), cast(${g.firstAt} as bigint), cast(${g.lastAt} as bigint))`));
      const res = await sql<{ id: number }>`with v(id, n, first_at, last_at) as (values ${values})
        update links set click_count = links.click_count + v.n,
          first_click_at = case when links.first_click_at is null or v.first_at < links.first_click_at then v.first_at else links.first_click_at end,
          last_click_at = case when links.last_click_at is null or v.last_at > links.last_click_at then v.last_at else links.last_click_at end
        from v where links.id = v.id returning links.id as id`.execute(tx);
      for (const r of res.rows) live.add(Number(r.id));
    }
    return live;
  }

  async function insertRecords(tx: Tx, events: readonly ClickEvent[]): Promise<void> {
    for (const part of chunks(events)) {
      await tx
        .insertInto('clicks')
        .values(part.map((e) => ({ link_id: e.linkId, short_code: e.shortCode, clicked_at: e.clickedAt, ip: e.ip, user_agent: e.userAgent, referrer: e.referrer, click_key: e.key ?? null })))
        .execute();
    }
  }

  async function addHourly(tx: Tx, events: readonly ClickEvent[]): Promise<void> {
    for (const part of chunks(perHour(events))) {
      await tx
        .insertInto('link_click_hourly')
        .values(part)
        .onConflict((oc) => oc.columns(['link_id', 'hour_start']).doUpdateSet((eb) => ({ clicks: eb('link_click_hourly.clicks', '+', eb.ref('excluded.clicks')) })))
        .execute();
    }
  }

  /** New distinct addresses per link: a (link, ip) row that did not exist yet. */
  async function addVisitors(tx: Tx, events: readonly ClickEvent[]): Promise<Map<number, number>> {
    const fresh = new Map<number, number>();
    for (const part of chunks(visitorPairs(events))) {
      const inserted = await tx.insertInto('link_visitors').values(part).onConflict((oc) => oc.doNothing()).returning('link_id').execute();
      for (const r of inserted) fresh.set(Number(r.link_id), (fresh.get(Number(r.link_id)) ?? 0) + 1);
    }
    return fresh;
  }

  async function addUniqueVisitors(tx: Tx, fresh: Map<number, number>): Promise<void> {
    for (const part of chunks([...fresh])) {
      const values = sql.join(part.map(([id, n]) => sql`(cast(${id} as bigint), cast(${n} as bigint))`));
      await sql`with v(id, n) as (values ${values})
        update links set unique_visitors = links.unique_visitors + v.n from v where links.id = v.id`.execute(tx);
    }
  }

  async function addDailyValues(tx: Tx, events: readonly ClickEvent[]): Promise<void> {
    const groups = dailyValueCounts(events);
    if (groups.size === 0) return;
    const keys = [...groups.values()].map((g) => g.key);
    const days = [...new Set(keys.map((k) => k.dayStart))];
    const stored = new Map<string, Set<string>>();
    for (const ids of chunks([...new Set(keys.map((k) => k.linkId))])) {
      const rows = await tx
        .selectFrom('link_click_daily_values')
        .select(['link_id', 'kind', 'day_start', 'value'])
        .where('link_id', 'in', ids)
        .where('day_start', 'in', days)
        .execute();
      for (const r of rows) {
        const id = dailyKeyId({ linkId: Number(r.link_id), kind: r.kind, dayStart: Number(r.day_start) });
        if (!stored.has(id)) stored.set(id, new Set());
        stored.get(id)!.add(r.value);
      }
    }
    for (const part of chunks(capDailyValues(groups, stored))) {
      await tx
        .insertInto('link_click_daily_values')
        .values(part)
        .onConflict((oc) =>
          oc.columns(['link_id', 'kind', 'day_start', 'value']).doUpdateSet((eb) => ({ clicks: eb('link_click_daily_values.clicks', '+', eb.ref('excluded.clicks')) })),
        )
        .execute();
    }
  }

  const portableWriter: ClickWriter = {
    /**
     * One transaction per batch: the click records, the link's counters and every rollup move together, so
     * the statistics (read from counters and rollups) always equal what the records say, and a crash loses a
     * batch whole or not at all.
     */
    async write(batch) {
      if (batch.length === 0) return;
      await db.transaction().execute(async (tx) => {
        const increments = perLink(batch);
        const live = await bumpLinks(tx, [...increments.values()]);
        const events = live.size === increments.size ? batch : batch.filter((e) => live.has(e.linkId));
        if (events.length === 0) return;
        await insertRecords(tx, events);
        await addHourly(tx, events);
        await addUniqueVisitors(tx, await addVisitors(tx, events));
        await addDailyValues(tx, events);
      });
    },
  };

  const sqliteWriter = storage.sqlite ? createSqliteClickWriter(storage.sqlite.name) : null;
  // The statistics' two reads, prepared on the embedded engine: a stats request runs them for the part of its
  // window that is not remembered (closed-months.ts), and Kysely's compilation cost more than the queries.
  // (The casts: better-sqlite3 binds JS numbers as REAL, which would turn the bucket division into a real one.)
  const prepared = () => storage.sqlite !== null && outsideKyselyTransaction(storage.sqlite);
  const seriesStatement: SQLite.Statement<[number, number, number, number, number], { start: number; clicks: number }> | null = storage.sqlite?.prepare(
    'select (hour_start / cast(? as integer)) * cast(? as integer) as start, sum(clicks) as clicks from link_click_hourly where link_id = ? and hour_start >= ? and hour_start < ? group by start',
  ) ?? null;
  const valuesStatement: SQLite.Statement<[number, string, number, number], { value: string; clicks: number }> | null = storage.sqlite?.prepare(
    'select value, sum(clicks) as clicks from link_click_daily_values where link_id = ? and kind = ? and day_start >= ? and day_start < ? group by value',
  ) ?? null;

  return {
    writer: sqliteWriter ?? portableWriter,

    /** Stops the embedded engine's writer thread (after the queue's last flush, before the database closes). */
    async close(): Promise<void> {
      await sqliteWriter?.close();
    },

    /** Clicks per bucket of `unitMs` (an hour or a day, both whole multiples of an hour) in [from, to). */
    async series(linkId: number, from: number, to: number, unitMs: number): Promise<Array<{ start: number; clicks: number }>> {
      if (seriesStatement && prepared()) return seriesStatement.all(unitMs, unitMs, linkId, from, to);
      const unit = sql.lit(unitMs);
      const bucket = sql<number>`(hour_start / ${unit}) * ${unit}`;
      const rows = await db
        .selectFrom('link_click_hourly')
        .select([bucket.as('start'), sql<number>`sum(clicks)`.as('clicks')])
        .where('link_id', '=', linkId)
        .where('hour_start', '>=', from)
        .where('hour_start', '<', to)
        .groupBy(bucket)
        .execute();
      return rows.map((r) => ({ start: Number(r.start), clicks: Number(r.clicks) }));
    },

    /** Clicks per value of one kind over whole days in [fromDay, toDay), in no particular order. */
    async valueTotals(linkId: number, kind: 'referrer' | 'user_agent', fromDay: number, toDay: number): Promise<Array<[string, number]>> {
      if (valuesStatement && prepared()) return valuesStatement.all(linkId, kind, fromDay, toDay).map((r) => [r.value, r.clicks]);
      const rows = await db
        .selectFrom('link_click_daily_values')
        .select(['value', sql<number>`sum(clicks)`.as('clicks')])
        .where('link_id', '=', linkId)
        .where('kind', '=', kind)
        .where('day_start', '>=', fromDay)
        .where('day_start', '<', toDay)
        .groupBy('value')
        .execute();
      return rows.map((r) => [r.value, Number(r.clicks)]);
    },
  };
}
