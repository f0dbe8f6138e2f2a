import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, LinkClickSummaryTable } from '../../db/types.js';
import type { ClickEvent, ClickWriter } from '../../infra/click-queue.js';
import { capDailyValues, dailyKeyId, dailyValueCounts, perHour, perLink, visitorPairs, type LinkIncrement } from './click-rollups.js';

type Tx = Transaction<Database>;

/** Rows per multi-row statement: well below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const CHUNK = 500;

const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

export type ClicksRepository = ReturnType<typeof createClicksRepository>;

export function createClicksRepository(db: Kysely<Database>) {
  /**
   * Adds to click_count and tells which links still exist. The UPDATE takes the row lock on PostgreSQL,
   * so a link deleted meanwhile either waits for this transaction or is already gone (its clicks are
   * dropped with it, like the clicks a delete cascades away).
   */
  async function bumpClickCounts(tx: Tx, increments: LinkIncrement[]): Promise<Set<number>> {
    const live = new Set<number>();
    const sorted = [...increments].sort((a, b) => a.linkId - b.linkId);
    for (const part of chunks(sorted)) {
      const values = sql.join(part.map((g) => sql`(cast(${g.linkId} as bigint), cast(${g.clicks} as bigint))`));
      const res = await sql<{ id: number }>`with v(id, n) as (values ${values})
        update links set click_count = links.click_count + v.n from v where links.id = v.id returning links.id as id`.execute(tx);
      for (const r of res.rows) live.add(Number(r.id));
    }
    return live;
  }

  async function insertRecords(tx: Tx, events: readonly ClickEvent[]): Promise<void> {
    for (const part of chunks(events)) {
      await tx
        .insertInto('clicks')
        .values(part.map((e) => ({ link_id: e.linkId, short_code: e.shortCode, clicked_at: e.clickedAt, ip: e.ip, user_agent: e.userAgent, referrer: e.referrer })))
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

  async function addSummaries(tx: Tx, increments: LinkIncrement[], freshVisitors: Map<number, number>): Promise<void> {
    const rows: LinkClickSummaryTable[] = increments.map((g) => ({
      link_id: g.linkId, total_clicks: g.clicks, unique_visitors: freshVisitors.get(g.linkId) ?? 0, first_click_at: g.firstAt, last_click_at: g.lastAt,
    }));
    for (const part of chunks(rows)) {
      await tx
        .insertInto('link_click_summary')
        .values(part)
        .onConflict((oc) =>
          oc.column('link_id').doUpdateSet((eb) => ({
            total_clicks: eb('link_click_summary.total_clicks', '+', eb.ref('excluded.total_clicks')),
            unique_visitors: eb('link_click_summary.unique_visitors', '+', eb.ref('excluded.unique_visitors')),
            first_click_at: eb.case().when('excluded.first_click_at', '<', eb.ref('link_click_summary.first_click_at'))
              .then(eb.ref('excluded.first_click_at')).else(eb.ref('link_click_summary.first_click_at')).end(),
            last_click_at: eb.case().when('excluded.last_click_at', '>', eb.ref('link_click_summary.last_click_at'))
              .then(eb.ref('excluded.last_click_at')).else(eb.ref('link_click_summary.last_click_at')).end(),
          })),
        )
        .execute();
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

  const writer: ClickWriter = {
    /**
     * One transaction per batch: the click records, click_count and every rollup move together, so the
     * statistics (read from rollups) always equal what the records say, and a crash loses a batch whole or
     * not at all.
     */
    async write(batch) {
      if (batch.length === 0) return;
      await db.transaction().execute(async (tx) => {
        const increments = perLink(batch);
        const live = await bumpClickCounts(tx, [...increments.values()]);
        const events = live.size === increments.size ? batch : batch.filter((e) => live.has(e.linkId));
        if (events.length === 0) return;
        const liveIncrements = [...increments.values()].filter((g) => live.has(g.linkId));
        await insertRecords(tx, events);
        await addHourly(tx, events);
        await addSummaries(tx, liveIncrements, await addVisitors(tx, events));
        await addDailyValues(tx, events);
      });
    },
  };

  return {
    writer,

    async summary(linkId: number): Promise<LinkClickSummaryTable | undefined> {
      return db.selectFrom('link_click_summary').selectAll().where('link_id', '=', linkId).executeTakeFirst();
    },

    /** Clicks per bucket of `unitMs` (an hour or a day, both whole multiples of an hour) in [from, to). */
    async series(linkId: number, from: number, to: number, unitMs: number): Promise<Array<{ start: number; clicks: number }>> {
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

    /** The most frequent values of one kind over whole days in [fromDay, toDay). */
    async topValues(linkId: number, kind: 'referrer' | 'user_agent', fromDay: number, toDay: number, limit: number): Promise<Array<{ value: string; clicks: number }>> {
      const total = sql<number>`sum(clicks)`;
      const rows = await db
        .selectFrom('link_click_daily_values')
        .select(['value', total.as('clicks')])
        .where('link_id', '=', linkId)
        .where('kind', '=', kind)
        .where('day_start', '>=', fromDay)
        .where('day_start', '<', toDay)
        .groupBy('value')
        .orderBy(total, 'desc')
        .orderBy('value')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ value: r.value, clicks: Number(r.clicks) }));
    },
  };
}
