import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Storage } from '../../../db/database.js';
import type { Database } from '../../../db/types.js';
import type { ClickEvent } from '../event/click-event.js';
import type { ClickWriter } from './click-writer.js';
import {
  dailyKeyId, freshAsOf, planForLive, planRollups, planUserRollups,
  type ClickFacts, type DailyValueGroup, type DailyValueKind, type HourIncrement, type LinkIncrement, type UserDailyValueGroup,
  type UserHourIncrement, type VisitorPair,
} from './rollup-plan.js';
import { capDailyGroup, OTHER_VALUE } from './daily-values.js';

type Tx = Transaction<Database>;

/** Rows per multi-row statement: well below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const CHUNK = 500;

const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

export interface PgClickWriter extends ClickWriter {
  writeImported(tx: Transaction<Database>, batch: readonly ClickEvent[]): Promise<void>;
}

/**
 * The PostgreSQL writer: a batch's click records and rollups through Kysely, in one transaction. (The
 * embedded engine writes the same rows in a worker thread: sqlite-click-writer.ts, see there why; this writer
 * runs on SQLite too, where tests compare the two.)
 */
export function createPgClickWriter(storage: Pick<Storage, 'db' | 'dialect'>): PgClickWriter {
  const db: Kysely<Database> = storage.db;
  // This writer's row in click_ingest (data_fresh_as_of).
  const writerName = `${hostname().slice(0, 32)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /**
   * Adds to click_count and moves first/last click, and tells which links still exist. The UPDATE takes the
   * row lock on PostgreSQL, so a link deleted meanwhile either waits for this transaction or is already gone
   * (its clicks are dropped with it, like the clicks a delete cascades away).
   */
  async function bumpLinks(tx: Tx, increments: readonly LinkIncrement[]): Promise<Map<number, number | null>> {
    const live = new Map<number, number | null>();
    for (const part of chunks(increments)) {
      const values = sql.join(part.map((g) => sql`(cast(${g.linkId} as bigint), cast(${g.clicks} as bigint), cast(${g.bots} as bigint), cast(${g.firstAt} as bigint), cast(${g.lastAt} as bigint))`));
      const res = await sql<{ id: number; user_id: number | null }>`with v(id, n, bots, first_at, last_at) as (values ${values})
        update links set click_count = links.click_count + v.n, bot_clicks = links.bot_clicks + v.bots,
          first_click_at = case when links.first_click_at is null or v.first_at < links.first_click_at then v.first_at else links.first_click_at end,
          last_click_at = case when links.last_click_at is null or v.last_at > links.last_click_at then v.last_at else links.last_click_at end
        from v where links.id = v.id returning links.id as id, links.user_id as user_id`.execute(tx);
      for (const r of res.rows) live.set(Number(r.id), r.user_id === null ? null : Number(r.user_id));
    }
    return live;
  }

  async function insertRecords(tx: Tx, records: ReadonlyArray<readonly [ClickEvent, ClickFacts]>, imported = false): Promise<void> {
    for (const part of chunks(records)) {
      await tx
        .insertInto('clicks')
        .values(part.map(([e, f]) => ({
          link_id: e.linkId, short_code: e.shortCode, clicked_at: e.clickedAt, ip: e.ip, user_agent: e.userAgent, referrer: e.referrer, click_key: e.key ?? null, alias: e.alias ?? null,
          is_bot: f.isBot ? 1 : 0, browser: f.browser, os: f.os, device: f.device, country: f.country, domain: e.domain ?? null, ...(imported ? { imported: 1 } : {}),
        })))
        .execute();
    }
  }

  async function addHourly(tx: Tx, hours: readonly HourIncrement[]): Promise<void> {
    for (const part of chunks(hours)) {
      await tx
        .insertInto('link_click_hourly')
        .values(part.map((h) => ({ link_id: h.linkId, hour_start: h.hourStart, clicks: h.clicks, bots: h.bots })))
        .onConflict((oc) => oc.columns(['link_id', 'hour_start']).doUpdateSet((eb) => ({
          clicks: eb('link_click_hourly.clicks', '+', eb.ref('excluded.clicks')),
          bots: eb('link_click_hourly.bots', '+', eb.ref('excluded.bots')),
        })))
        .execute();
    }
  }

  async function addUserHourly(tx: Tx, hours: readonly UserHourIncrement[]): Promise<void> {
    for (const part of chunks(hours)) {
      await tx
        .insertInto('user_click_hourly')
        .values(part.map((h) => ({ user_id: h.userId, hour_start: h.hourStart, clicks: h.clicks, bots: h.bots })))
        .onConflict((oc) => oc.columns(['user_id', 'hour_start']).doUpdateSet((eb) => ({
          clicks: eb('user_click_hourly.clicks', '+', eb.ref('excluded.clicks')),
          bots: eb('user_click_hourly.bots', '+', eb.ref('excluded.bots')),
        })))
        .execute();
    }
  }

  /** The user-level top lists, capped like the link's (capDailyGroup) against what the user's rows hold. */
  async function addUserDailyValues(tx: Tx, groups: readonly UserDailyValueGroup[]): Promise<void> {
    if (groups.length === 0) return;
    const days = [...new Set(groups.map((g) => g.key.dayStart))];
    const stored = new Map<string, Set<string>>();
    for (const ids of chunks([...new Set(groups.map((g) => g.key.userId))])) {
      const rows = await tx.selectFrom('user_click_daily_values').select(['user_id', 'kind', 'day_start', 'value']).where('user_id', 'in', ids).where('day_start', 'in', days).execute();
      for (const r of rows) {
        const id = `${Number(r.user_id)}:${r.kind}:${Number(r.day_start)}`;
        if (!stored.has(id)) stored.set(id, new Set());
        stored.get(id)!.add(r.value);
      }
    }
    const rows: Array<{ user_id: number; kind: UserDailyValueGroup['key']['kind']; day_start: number; value: string; clicks: number }> = [];
    for (const g of groups) {
      const known = stored.get(g.id) ?? new Set<string>();
      const capped = capDailyGroup(g, known.size - (known.has(OTHER_VALUE) ? 1 : 0), (v) => known.has(v));
      for (const [value, clicks] of capped.rows) rows.push({ user_id: g.key.userId, kind: g.key.kind, day_start: g.key.dayStart, value, clicks });
    }
    for (const part of chunks(rows)) {
      await tx
        .insertInto('user_click_daily_values')
        .values(part)
        .onConflict((oc) => oc.columns(['user_id', 'kind', 'day_start', 'value']).doUpdateSet((eb) => ({ clicks: eb('user_click_daily_values.clicks', '+', eb.ref('excluded.clicks')) })))
        .execute();
    }
  }

  /** data_fresh_as_of: this writer's latest batch (never moves back). */
  async function markFresh(tx: Tx, at: number): Promise<void> {
    await tx
      .insertInto('click_ingest')
      .values({ writer: writerName, fresh_as_of: at })
      .onConflict((oc) => oc.column('writer').doUpdateSet({ fresh_as_of: sql`case when excluded.fresh_as_of > click_ingest.fresh_as_of then excluded.fresh_as_of else click_ingest.fresh_as_of end` }))
      .execute();
  }

  /** New distinct addresses per link: a (link, ip) row that did not exist yet. */
  async function addVisitors(tx: Tx, visitors: readonly VisitorPair[]): Promise<Map<number, number>> {
    const fresh = new Map<number, number>();
    for (const part of chunks(visitors)) {
      const inserted = await tx.insertInto('link_visitors').values(part.map((v) => ({ link_id: v.linkId, ip: v.ip }))).onConflict((oc) => oc.doNothing()).returning('link_id').execute();
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

  async function addDailyValues(tx: Tx, groups: readonly DailyValueGroup[]): Promise<void> {
    if (groups.length === 0) return;
    const days = [...new Set(groups.map((g) => g.key.dayStart))];
    const stored = new Map<string, Set<string>>();
    for (const ids of chunks([...new Set(groups.map((g) => g.key.linkId))])) {
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
    const rows: Array<{ link_id: number; kind: DailyValueKind; day_start: number; value: string; clicks: number }> = [];
    for (const g of groups) {
      const known = stored.get(g.id) ?? new Set<string>();
      const capped = capDailyGroup(g, known.size - (known.has(OTHER_VALUE) ? 1 : 0), (v) => known.has(v));
      for (const [value, clicks] of capped.rows) rows.push({ link_id: g.key.linkId, kind: g.key.kind, day_start: g.key.dayStart, value, clicks });
    }
    for (const part of chunks(rows)) {
      await tx
        .insertInto('link_click_daily_values')
        .values(part)
        .onConflict((oc) =>
          oc.columns(['link_id', 'kind', 'day_start', 'value']).doUpdateSet((eb) => ({ clicks: eb('link_click_daily_values.clicks', '+', eb.ref('excluded.clicks')) })),
        )
        .execute();
    }
  }

  /**
   * The click records, the links' counters and every rollup of a batch, inside `tx`: they move together, so
   * the statistics (read from counters and rollups) always equal what the records say. The increments are
   * rollup-plan.ts's plan, as on the embedded engine.
   */
  async function writeIn(tx: Tx, batch: readonly ClickEvent[], imported: boolean): Promise<void> {
    const full = planRollups(batch);
    const owners = await bumpLinks(tx, full.links);
    const live = new Set(owners.keys());
    const plan = live.size === full.links.length ? full : planForLive(full, live);
    const records = batch.map((e, i) => [e, full.facts[i]!] as const).filter(([e]) => live.has(e.linkId));
    if (!imported) await markFresh(tx, freshAsOf(full));
    if (records.length === 0) return;
    await insertRecords(tx, records, imported);
    await addHourly(tx, plan.hours);
    await addUniqueVisitors(tx, await addVisitors(tx, plan.visitors));
    await addDailyValues(tx, plan.daily);
    const users = planUserRollups(plan, owners);
    await addUserHourly(tx, users.hours);
    await addUserDailyValues(tx, users.daily);
  }

  return {
    /** One transaction per batch: a crash loses a batch whole or not at all. */
    async write(batch) {
      if (batch.length === 0) return;
      await db.transaction().execute(async (tx) => {
        await storage.dialect.preferIndexLookups(tx);
        await writeIn(tx, batch, false);
      });
    },
    /**
     * Visits brought over by an importer (SPEC §20), written inside the importer's transaction with the link
     * they belong to, so that a link never stands without its history; recorded with `imported = 1`, and
     * counted in the rollups on their own dates like any visit. They leave data_fresh_as_of alone: that tells
     * how far live visits are counted.
     */
    writeImported: (tx: Tx, batch: readonly ClickEvent[]): Promise<void> => writeIn(tx, batch, true),
  };
}
