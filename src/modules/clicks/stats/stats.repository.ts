import { sql, type Kysely } from 'kysely';
import { fastStatements, type FastStatement, type Storage } from '../../../db/database.js';
import type { ChoiceKind, Database, UserValueKind, ValueKind } from '../../../db/types.js';
import { DAY_MS, HOUR_MS } from '../rollups/rollup-plan.js';
import { createAccountReads } from './stats-account.repository.js';

export type { UserTotals } from './stats-account.repository.js';

/**
 * Whose rollups a statistics read looks at: one link's, the per-user rollups of one user, or, for a user's
 * links on some domains only (SPEC §19), the link rollups of those links.
 */
export type StatsScope = { link: number } | { user: number; domains?: readonly number[] };

/** A user's links on these domains (the user's rollups do not tell domains apart). */
type OnDomains = { user: number; domains: readonly number[] };
const onDomains = (scope: StatsScope): scope is OnDomains => 'domains' in scope && scope.domains !== undefined;

const LINK_KINDS: readonly ValueKind[] = ['referrer', 'user_agent', 'browser', 'os', 'device', 'country'];
const USER_KINDS: readonly UserValueKind[] = [...LINK_KINDS, 'link'];

/** A top-list entry's key across kinds: the kind, a NUL (never in a value: headers cannot carry it), the value. */
export type ValueKey = string;
export const valueKey = (kind: UserValueKind, value: string): ValueKey => `${kind}\u0000${value}`;
export function splitValueKey(key: ValueKey): [UserValueKind, string] {
  const at = key.indexOf('\u0000');
  return [key.slice(0, at) as UserValueKind, key.slice(at + 1)];
}

type SeriesRow = { start: number; clicks: number; bots: number };
/** A rule's or a variant's human clicks and distinct visitors over some days (SPEC §21: by_rule, by_variant). */
export type ChoiceRow = { kind: ChoiceKind; value: string; clicks: number; visitors: number };
type ValueRow = { kind: UserValueKind; value: string; clicks: number };

/**
 * The two frequent reads as prepared statements on the embedded engine (null elsewhere), and whether they can
 * run now.
 */
function preparedReads(storage: Pick<Storage, 'sqlite'>) {
  const fast = fastStatements(storage);
  const prepare = <P extends unknown[], R>(text: string): FastStatement<P, R> | null =>
    fast?.prepare<P, R>(text) ?? null;
  const seriesSql = (table: string, id: string) =>
    `select (hour_start / cast(? as integer)) * cast(? as integer) as start, sum(clicks) as clicks, sum(bots) as bots from ${table} where ${id} = ? and hour_start >= ? and hour_start < ? group by start`;
  // Every kind of top list in one statement (one round trip). The kinds are listed: the primary key is
  // (id, kind, day_start, value), so `kind in (…)` makes one index range per kind over the days; without it the
  // statement read every day of the link (measured: 12 ms instead of 1 per request at 10 M clicks, bench/).
  const inList = (kinds: readonly string[]) => kinds.map((k) => `'${k}'`).join(', ');
  const valuesSql = (table: string, id: string, kinds: readonly string[]) =>
    `select kind, value, sum(clicks) as clicks from ${table} where ${id} = ? and kind in (${inList(kinds)}) and day_start >= ? and day_start < ? group by kind, value`;
  // Distinct visitors: '' is a click without one (counted as a click, not as a visitor).
  const choicesSql = `select kind, value, sum(clicks) as clicks, count(distinct case when visitor <> '' then visitor end) as visitors
    from link_click_daily_choices where link_id = ? and day_start >= ? and day_start < ? group by kind, value`;
  return {
    prepared: (): boolean => fast !== null && fast.usable(),
    statements: {
      linkSeries: prepare<[number, number, number, number, number], SeriesRow>(
        seriesSql('link_click_hourly', 'link_id'),
      ),
      userSeries: prepare<[number, number, number, number, number], SeriesRow>(
        seriesSql('user_click_hourly', 'user_id'),
      ),
      linkValues: prepare<[number, number, number], ValueRow>(
        valuesSql('link_click_daily_values', 'link_id', LINK_KINDS),
      ),
      userValues: prepare<[number, number, number], ValueRow>(
        valuesSql('user_click_daily_values', 'user_id', USER_KINDS),
      ),
      linkChoices: prepare<[number, number, number], ChoiceRow>(choicesSql),
    },
  };
}

/**
 * A user's links on some domains that have rollup rows in a window, from the links' own rollups: the cost grows
 * with the number of those links (one index range of each link's hours or days in the window), still not with
 * the number of clicks. A link's clicks all lie between its first_click_at and last_click_at (kept by every
 * click writer with its rollups), and a row of `unitMs` (an hour or a day) starting in [from, to) holds clicks
 * in [from, to + unitMs): links whose clicks lie wholly outside that are not looked into. Measured on 100,000
 * links of one domain with 1,000,000 visits over 2.7 years, three-month windows, servers alternating: 0.53 to
 * 1.7 s a request when every link was looked into, 0.16 to 0.47 s since.
 */
const linksOn = (db: Kysely<Database>, scope: OnDomains, span: { from: number; to: number; unitMs: number }) =>
  db
    .selectFrom('links')
    .select('id')
    .where('user_id', '=', scope.user)
    .where('domain_id', 'in', scope.domains.length ? [...scope.domains] : [-1])
    .where('first_click_at', '<', span.to + span.unitMs)
    .where('last_click_at', '>=', span.from);

async function domainSeries(
  db: Kysely<Database>,
  scope: OnDomains,
  from: number,
  to: number,
  unitMs: number,
): Promise<Array<[number, [number, number]]>> {
  const unit = sql.lit(unitMs);
  const bucket = sql<number>`(hour_start / ${unit}) * ${unit}`;
  const rows = await db
    .selectFrom('link_click_hourly')
    .select([bucket.as('start'), sql<number>`sum(clicks)`.as('clicks'), sql<number>`sum(bots)`.as('bots')])
    .where('link_id', 'in', linksOn(db, scope, { from, to, unitMs: HOUR_MS }))
    .where('hour_start', '>=', from)
    .where('hour_start', '<', to)
    .groupBy(bucket)
    .execute();
  return rows.map((r) => [Number(r.start), [Number(r.clicks), Number(r.bots)]]);
}

/** The links' top-list values, and the `link` kind (human clicks per code) from their hours. */
async function domainValueTotals(
  db: Kysely<Database>,
  scope: OnDomains,
  fromDay: number,
  toDay: number,
): Promise<Array<[ValueKey, number]>> {
  const [values, perLink] = await Promise.all([
    db
      .selectFrom('link_click_daily_values')
      .select(['kind', 'value', sql<number>`sum(clicks)`.as('clicks')])
      .where('link_id', 'in', linksOn(db, scope, { from: fromDay, to: toDay, unitMs: DAY_MS }))
      .where('kind', 'in', LINK_KINDS)
      .where('day_start', '>=', fromDay)
      .where('day_start', '<', toDay)
      .groupBy(['kind', 'value'])
      .execute(),
    db
      .selectFrom('link_click_hourly as h')
      .innerJoin('links as l', 'l.id', 'h.link_id')
      .select(['l.short_code as value', sql<number>`sum(h.clicks - h.bots)`.as('clicks')])
      .where('h.link_id', 'in', linksOn(db, scope, { from: fromDay, to: toDay, unitMs: HOUR_MS }))
      .where('h.hour_start', '>=', fromDay)
      .where('h.hour_start', '<', toDay)
      .groupBy('l.short_code')
      .execute(),
  ]);
  return [
    ...values.map((r): [ValueKey, number] => [valueKey(r.kind, r.value), Number(r.clicks)]),
    ...perLink
      .filter((r) => Number(r.clicks) > 0)
      .map((r): [ValueKey, number] => [valueKey('link', r.value), Number(r.clicks)]),
  ];
}

/** Clicks (all) and bots per bucket of `unitMs` (a whole multiple of an hour) in [from, to). */
async function readSeries(
  db: Kysely<Database>,
  { statements, prepared }: ReturnType<typeof preparedReads>,
  scope: StatsScope,
  from: number,
  to: number,
  unitMs: number,
): Promise<Array<[number, [number, number]]>> {
  if (onDomains(scope)) return domainSeries(db, scope, from, to, unitMs);
  const isLink = 'link' in scope;
  const id = isLink ? scope.link : scope.user;
  const statement = isLink ? statements.linkSeries : statements.userSeries;
  if (statement && prepared())
    return statement.all(unitMs, unitMs, id, from, to).map((r) => [r.start, [r.clicks, r.bots]]);
  const unit = sql.lit(unitMs);
  const bucket = sql<number>`(hour_start / ${unit}) * ${unit}`;
  const select = [
    bucket.as('start'),
    sql<number>`sum(clicks)`.as('clicks'),
    sql<number>`sum(bots)`.as('bots'),
  ] as const;
  const rows = isLink
    ? await db
        .selectFrom('link_click_hourly')
        .select(select)
        .where('link_id', '=', id)
        .where('hour_start', '>=', from)
        .where('hour_start', '<', to)
        .groupBy(bucket)
        .execute()
    : await db
        .selectFrom('user_click_hourly')
        .select(select)
        .where('user_id', '=', id)
        .where('hour_start', '>=', from)
        .where('hour_start', '<', to)
        .groupBy(bucket)
        .execute();
  return rows.map((r) => [Number(r.start), [Number(r.clicks), Number(r.bots)]]);
}

/**
 * A link's routed human clicks and visitors per rule and variant: one index range of the link's days. Its rows
 * are the link's routed visitors per day, so the read grows with them (never with bots, nor for links without
 * rules, which have no rows).
 */
async function readChoices(
  db: Kysely<Database>,
  { statements, prepared }: ReturnType<typeof preparedReads>,
  linkId: number,
  fromDay: number,
  toDay: number,
): Promise<ChoiceRow[]> {
  const rows =
    statements.linkChoices && prepared()
      ? statements.linkChoices.all(linkId, fromDay, toDay)
      : await db
          .selectFrom('link_click_daily_choices')
          .select([
            'kind',
            'value',
            sql<number>`sum(clicks)`.as('clicks'),
            sql<number>`count(distinct case when visitor <> '' then visitor end)`.as('visitors'),
          ])
          .where('link_id', '=', linkId)
          .where('day_start', '>=', fromDay)
          .where('day_start', '<', toDay)
          .groupBy(['kind', 'value'])
          .execute();
  return rows.map((r) => ({ kind: r.kind, value: r.value, clicks: Number(r.clicks), visitors: Number(r.visitors) }));
}

export type StatsRepository = ReturnType<typeof createStatsRepository>;

/**
 * The statistics' reads (SPEC §6, §15), from rollups only. Each reads a bounded number of rows per hour or
 * day of the window, never the click records. The embedded engine runs the two frequent reads as prepared
 * statements: Kysely's compilation cost more than the queries (bench/). (The casts: better-sqlite3 binds JS
 * numbers as REAL, which would turn the bucket division into a real one.)
 */
export function createStatsRepository(storage: Pick<Storage, 'db' | 'sqlite'>) {
  const db: Kysely<Database> = storage.db;
  const reads = preparedReads(storage);
  const { statements, prepared } = reads;

  return {
    ...createAccountReads(db),

    /** Clicks (all) and bots per bucket of `unitMs` (a whole multiple of an hour) in [from, to). */
    series: (scope: StatsScope, from: number, to: number, unitMs: number) =>
      readSeries(db, reads, scope, from, to, unitMs),

    /**
     * A link's human clicks and distinct human visitors per rule and per variant (SPEC §21) over whole UTC days in
     * [fromDay, toDay), in no particular order.
     */
    choiceTotals: (linkId: number, fromDay: number, toDay: number) => readChoices(db, reads, linkId, fromDay, toDay),

    /** Clicks per (kind, value) over whole UTC days in [fromDay, toDay), every kind at once, in no particular order. */
    async valueTotals(scope: StatsScope, fromDay: number, toDay: number): Promise<Array<[ValueKey, number]>> {
      if (onDomains(scope)) return domainValueTotals(db, scope, fromDay, toDay);
      const isLink = 'link' in scope;
      const id = isLink ? scope.link : scope.user;
      const statement = isLink ? statements.linkValues : statements.userValues;
      const rows: ValueRow[] =
        statement && prepared()
          ? statement.all(id, fromDay, toDay)
          : isLink
            ? await db
                .selectFrom('link_click_daily_values')
                .select(['kind', 'value', sql<number>`sum(clicks)`.as('clicks')])
                .where('link_id', '=', id)
                .where('kind', 'in', LINK_KINDS)
                .where('day_start', '>=', fromDay)
                .where('day_start', '<', toDay)
                .groupBy(['kind', 'value'])
                .execute()
            : await db
                .selectFrom('user_click_daily_values')
                .select(['kind', 'value', sql<number>`sum(clicks)`.as('clicks')])
                .where('user_id', '=', id)
                .where('kind', 'in', USER_KINDS)
                .where('day_start', '>=', fromDay)
                .where('day_start', '<', toDay)
                .groupBy(['kind', 'value'])
                .execute();
      return rows.map((r) => [valueKey(r.kind, r.value), Number(r.clicks)]);
    },
  };
}
