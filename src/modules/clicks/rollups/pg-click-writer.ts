import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Storage } from '../../../db/database.js';
import type { Database } from '../../../db/types.js';
import type { ClickEvent } from '../event/click-event.js';
import type { ClickWriter } from './click-writer.js';
import {
  freshAsOf,
  planForLive,
  planRollups,
  planUserRollups,
  type ClickFacts,
  type LinkIncrement,
  type VisitorPair,
} from './rollup-plan.js';
import {
  CLICK_RECORDS,
  LINK_COUNTERS,
  LINK_DAILY_CHOICES,
  LINK_DAILY_VALUES,
  LINK_HOURLY,
  upsertColumns,
  USER_DAILY_VALUES,
  USER_HOURLY,
  type CounterMerge,
  type DailyValuesTable,
  type RollupUpsert,
} from './rollup-tables.js';
import { capDailyGroup, OTHER_VALUE, type ValueCounts } from './daily-values.js';
import { writeSetsIn } from './pg-set-writer.js';
import { createClickParts } from './pg-click-parts.js';
import { clickedLinkOf, type ClickedLink } from './click-events.js';
import { recordClickEvents } from './record-click-events.js';
import type { Dialect } from '../../../db/dialect.js';

type Tx = Transaction<Database>;

/** Rows per multi-row statement: well below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const CHUNK = 500;

const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

const columnList = (columns: readonly string[]): RawBuilder<unknown> => sql.join(columns.map((c) => sql.ref(c)));
const valueRows = (rows: ReadonlyArray<readonly unknown[]>): RawBuilder<unknown> =>
  sql.join(rows.map((r) => sql`(${sql.join(r)})`));

/** Adds rows to a rollup table (rollup-tables.ts): inserted, or their sums added to the stored row. */
async function upsert(tx: Tx, t: RollupUpsert<never>, rows: ReadonlyArray<readonly unknown[]>): Promise<void> {
  const added = sql.join(
    t.sums.map((c) => sql`${sql.ref(c)} = ${sql.ref(`${t.table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`),
  );
  for (const part of chunks(rows)) {
    await sql`insert into ${sql.table(t.table)} (${columnList(upsertColumns(t))}) values ${valueRows(part)}
      on conflict (${columnList(t.key)}) do update set ${added}`.execute(tx);
  }
}

/** upsert() of a plan's entries, each one row (the table's `values`). */
const upsertEach = <T>(tx: Tx, t: RollupUpsert<[T]>, items: readonly T[]) =>
  upsert(
    tx,
    t,
    items.map((item) => t.values(item)),
  );

/** A counter of LINK_COUNTERS merged with what the CTE `v` brings. */
function mergeCounter(column: string, merge: CounterMerge): RawBuilder<unknown> {
  const stored = sql.ref(`links.${column}`);
  const added = sql.ref(`v.${column}`);
  if (merge === 'add') return sql`${sql.ref(column)} = ${stored} + ${added}`;
  const wins = merge === 'min' ? sql`${added} < ${stored}` : sql`${added} > ${stored}`;
  return sql`${sql.ref(column)} = case when ${stored} is null or ${wins} then ${added} else ${stored} end`;
}

/**
 * Adds to the link counters (click_count, first/last click …) and tells which links still exist, with their
 * owners. The UPDATE takes the row lock on PostgreSQL, so a link deleted meanwhile either waits for this
 * transaction or is already gone (its clicks are dropped with it, like the clicks a delete takes away): the rows
 * written after it have no foreign key to `links` there (migration 061), and this lock keeps them in step.
 */
async function bumpLinks(tx: Tx, increments: readonly LinkIncrement[]): Promise<Map<number, ClickedLink>> {
  const live = new Map<number, ClickedLink>();
  const columns = columnList(['id', ...LINK_COUNTERS.map((c) => c.column)]);
  const set = sql.join(LINK_COUNTERS.map((c) => mergeCounter(c.column, c.merge)));
  for (const part of chunks(increments)) {
    const values = sql.join(
      part.map(
        (g) =>
          sql`(${sql.join([g.linkId, ...LINK_COUNTERS.map((c) => c.value(g))].map((n) => sql`cast(${n} as bigint)`))})`,
      ),
    );
    const res = await sql<Parameters<typeof clickedLinkOf>[0] & { id: number }>`with v(${columns}) as (values ${values})
      update links set ${set} from v where links.id = v.id
      returning links.id, links.user_id, links.domain_id, links.original_url`.execute(tx);
    for (const r of res.rows) live.set(Number(r.id), clickedLinkOf(r));
  }
  return live;
}

/** Inserts the records; their ids, in the order given. */
async function insertRecords(
  tx: Tx,
  records: ReadonlyArray<readonly [ClickEvent, ClickFacts]>,
  imported: boolean,
): Promise<number[]> {
  const ids: number[] = [];
  for (const part of chunks(records)) {
    const rows = part.map(([e, f]) => CLICK_RECORDS.values(e, f, imported));
    const res = await sql<{
      id: number;
    }>`insert into ${sql.table(CLICK_RECORDS.table)} (${columnList(CLICK_RECORDS.columns)}) values ${valueRows(rows)} returning id`.execute(
      tx,
    );
    for (const r of res.rows) ids.push(Number(r.id));
  }
  return ids;
}

/** New distinct addresses per link: a (link, ip) row that did not exist yet. */
async function addVisitors(tx: Tx, visitors: readonly VisitorPair[]): Promise<Map<number, number>> {
  const fresh = new Map<number, number>();
  for (const part of chunks(visitors)) {
    const inserted = await tx
      .insertInto('link_visitors')
      .values(part.map((v) => ({ link_id: v.linkId, ip: v.ip })))
      .onConflict((oc) => oc.doNothing())
      .returning('link_id')
      .execute();
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

/** A group of daily values of one owner (a link or a user), kind and day: rollup-plan.ts's. */
interface ValueGroup {
  /** `${owner}:${kind}:${dayStart}` */
  id: string;
  key: { kind: string; dayStart: number };
  values: ValueCounts;
}

/** The values stored per `${owner}:${kind}:${dayStart}` for these owners and days. */
async function storedValues(
  tx: Tx,
  t: DailyValuesTable,
  owners: readonly number[],
  days: readonly number[],
): Promise<Map<string, Set<string>>> {
  const owner = sql.ref(t.key[0]!);
  const stored = new Map<string, Set<string>>();
  for (const ids of chunks(owners)) {
    const { rows } = await sql<{
      owner: number;
      kind: string;
      day_start: number;
      value: string;
    }>`select ${owner} as owner, kind, day_start, value
      from ${sql.table(t.table)} where ${owner} in (${sql.join(ids)}) and day_start in (${sql.join(days)})`.execute(tx);
    for (const r of rows) {
      const id = `${Number(r.owner)}:${r.kind}:${Number(r.day_start)}`;
      if (!stored.has(id)) stored.set(id, new Set());
      stored.get(id)!.add(r.value);
    }
  }
  return stored;
}

/** The daily top lists of links or users, capped (capDailyGroup) against what their rows hold. */
async function addDailyValues<G extends ValueGroup>(
  tx: Tx,
  t: DailyValuesTable,
  groups: readonly G[],
  ownerOf: (g: G) => number,
): Promise<void> {
  if (groups.length === 0) return;
  const stored = await storedValues(
    tx,
    t,
    [...new Set(groups.map(ownerOf))],
    [...new Set(groups.map((g) => g.key.dayStart))],
  );
  const rows: unknown[][] = [];
  for (const g of groups) {
    const known = stored.get(g.id) ?? new Set<string>();
    const capped = capDailyGroup(g, known.size - (known.has(OTHER_VALUE) ? 1 : 0), (v) => known.has(v));
    for (const [value, clicks] of capped.rows)
      rows.push(t.values(ownerOf(g), g.key.kind, g.key.dayStart, value, clicks));
  }
  await upsert(tx, t, rows);
}

/** data_fresh_as_of: this writer's latest batch (never moves back). */
async function markFresh(tx: Tx, writer: string, at: number): Promise<void> {
  await tx
    .insertInto('click_ingest')
    .values({ writer, fresh_as_of: at })
    .onConflict((oc) =>
      oc.column('writer').doUpdateSet({
        fresh_as_of: sql`case when excluded.fresh_as_of > click_ingest.fresh_as_of
          then excluded.fresh_as_of else click_ingest.fresh_as_of end`,
      }),
    )
    .execute();
}

/**
 * The click records, the links' counters and every rollup of a batch, inside `tx`: they move together, so
 * the statistics (read from counters and rollups) always equal what the records say. The increments are
 * rollup-plan.ts's plan, as on the embedded engine. `writer`: this writer's row in click_ingest, for live
 * visits (imported ones leave data_fresh_as_of alone).
 */
async function writeIn(
  tx: Tx,
  dialect: Pick<Dialect, 'notify'>,
  batch: readonly ClickEvent[],
  writer: string | null,
): Promise<void> {
  const full = planRollups(batch);
  const linksOf = await bumpLinks(tx, full.links);
  const owners = new Map([...linksOf].map(([id, l]) => [id, l.userId]));
  const live = new Set(owners.keys());
  const plan = live.size === full.links.length ? full : planForLive(full, live);
  const records = batch.map((e, i) => [e, full.facts[i]!] as const).filter(([e]) => live.has(e.linkId));
  if (writer !== null) await markFresh(tx, writer, freshAsOf(full));
  if (records.length === 0) return;
  const ids = await insertRecords(tx, records, writer === null);
  // SPEC §22's link.clicked of live clicks, in this transaction; imported visits are no news.
  if (writer !== null) await recordClickEvents(tx, dialect, records, ids, linksOf);
  await upsertEach(tx, LINK_HOURLY, plan.hours);
  await addUniqueVisitors(tx, await addVisitors(tx, plan.visitors));
  await addDailyValues(tx, LINK_DAILY_VALUES, plan.daily, (g) => g.key.linkId);
  await upsertEach(tx, LINK_DAILY_CHOICES, plan.choices);
  const users = planUserRollups(plan, owners);
  await upsertEach(tx, USER_HOURLY, users.hours);
  await addDailyValues(tx, USER_DAILY_VALUES, users.daily, (g) => g.key.userId);
}

export interface PgClickWriter extends ClickWriter {
  writeImported(tx: Transaction<Database>, batch: readonly ClickEvent[]): Promise<void>;
}

/** The latest click of a batch: data_fresh_as_of. */
const latestOf = (batch: readonly ClickEvent[]): number =>
  batch.reduce((at, e) => (e.clickedAt > at ? e.clickedAt : at), 0);

/**
 * The PostgreSQL writer: a batch's click records and rollups in one transaction. Live batches on PostgreSQL
 * are written as sets (pg-set-writer.ts); imported visits, and every batch on SQLite (where tests compare this
 * writer with the embedded engine's thread, sqlite-click-writer.ts), through rollup-plan.ts's plan row by row.
 */
export function createPgClickWriter(
  storage: Pick<Storage, 'db' | 'dialect'>,
  opts: { sets?: boolean; parts?: boolean } = {},
): PgClickWriter {
  // `sets: false`: the plan row by row on PostgreSQL too (the test that holds the two to the same rows).
  const sets = storage.dialect.name === 'postgres' && opts.sets !== false;
  // `parts`: keyed clicks only (the stream's), a batch in parts of its own (pg-click-parts.ts).
  const parts = sets && opts.parts === true ? createClickParts(storage.db) : null;
  // This writer's row in click_ingest (data_fresh_as_of).
  const writerName = `${hostname().slice(0, 32)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const writeSets = async (tx: Tx, batch: readonly ClickEvent[]) => {
    await storage.dialect.preferIndexLookups(tx);
    const live = await writeSetsIn(tx, batch);
    await markFresh(tx, writerName, latestOf(batch));
    return live;
  };
  return {
    skipsRecordedKeys: sets,
    /** One transaction per batch (or per part): a crash loses a batch whole or not at all (or a part of it). */
    async write(batch) {
      if (batch.length === 0) return;
      if (parts) return parts.write(batch, writeSets);
      await storage.db.transaction().execute(async (tx) => {
        if (sets) return void (await writeSets(tx, batch));
        await storage.dialect.preferIndexLookups(tx);
        return writeIn(tx, storage.dialect, batch, writerName);
      });
    },
    /**
     * Visits brought over by an importer (SPEC §20), written inside the importer's transaction with the link
     * they belong to, so that a link never stands without its history; recorded with `imported = 1`, and
     * counted in the rollups on their own dates like any visit. They leave data_fresh_as_of alone: that tells
     * how far live visits are counted.
     */
    writeImported: (tx: Tx, batch: readonly ClickEvent[]): Promise<void> => writeIn(tx, storage.dialect, batch, null),
  };
}
