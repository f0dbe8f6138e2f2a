import { sql, type RawBuilder, type Transaction } from 'kysely';
import { EVENTS_CHANNEL } from '../../../db/events.js';
import type { Database } from '../../../db/types.js';
import type { ClickEvent } from '../event/click-event.js';
import { DIRECT_REFERRER, UNKNOWN_VALUE } from '../event/dimensions.js';
import { MAX_VALUES_PER_DAY, OTHER_VALUE } from './daily-values.js';
import { clickFacts, DAY_MS, HOUR_MS, referrerValue } from './rollup-plan.js';

type Tx = Transaction<Database>;
/** A link of the batch that still exists: its owner, and its clicks before the batch. */
export type LiveLink = { owner: number | null; clicks: number };

const VALUE_LENGTH = 255;

/**
 * A batch of live clicks written as sets on PostgreSQL (issue 37 item 3): the batch goes into a staging table
 * in ONE statement (its columns as arrays, `unnest`), and each table is then merged from it by one
 * INSERT … SELECT … GROUP BY (or UPDATE … FROM) per table, in the transaction of pg-click-writer.ts. The rows
 * and sums are those of rollup-plan.ts's plan, computed by PostgreSQL instead of in JavaScript.
 *
 * Why: the row-by-row plan sent each batch as a dozen statements of thousands of bound parameters (6 daily
 * values per human click), whose parsing and planning was most of PostgreSQL's time (measured, batches of 1,000
 * uniform over 100,000 links: 700 ms a batch, 1,400 clicks/s for one worker). `unnest`, not COPY: loading a
 * batch is a few per cent of its time (docs/performance.md). The staging table is temporary (never WAL-logged,
 * private to the connection, so two workers never see each other's batch), emptied at commit.
 *
 * What the user agent and referrer mean (browser, os, device, bot, the referrer's origin) is still decided in
 * JavaScript with the same caches as the plan (clickFacts, referrerValue), so both writers count the same
 * values; the daily-values cap (daily-values.ts: MAX_VALUES_PER_DAY distinct values per group, the rest as
 * OTHER_VALUE, admitted in the order they were first seen) is applied in SQL with the same rule.
 *
 * Locks are taken in key order (links first, by id; every merge sorted by its key), so two writers that share
 * rows wait for each other but never deadlock.
 */
const STAGE = sql`create temporary table if not exists click_stage (
  seq integer not null, link_id bigint not null, short_code text not null, clicked_at bigint not null,
  ip text, user_agent text, referrer text, click_key uuid, is_bot integer not null, browser text, os text,
  device text, country text, alias text, domain text, rule_id text, variant_id text, visitor text,
  v_referrer text, v_user_agent text, count_only integer not null
) on commit delete rows`;

/** The staged columns, in order, and each one's array type and value. */
const COLUMNS: ReadonlyArray<
  [name: string, type: string, value: (e: ClickEvent, f: ReturnType<typeof clickFacts>) => unknown]
> = [
  ['link_id', 'bigint', (e) => e.linkId],
  ['short_code', 'text', (e) => e.shortCode],
  ['clicked_at', 'bigint', (e) => e.clickedAt],
  ['ip', 'text', (e) => e.ip],
  ['user_agent', 'text', (e) => e.userAgent],
  ['referrer', 'text', (e) => e.referrer],
  ['click_key', 'uuid', (e) => e.key ?? null],
  ['is_bot', 'integer', (_, f) => (f.isBot ? 1 : 0)],
  ['browser', 'text', (_, f) => f.browser],
  ['os', 'text', (_, f) => f.os],
  ['device', 'text', (_, f) => f.device],
  ['country', 'text', (_, f) => f.country],
  ['alias', 'text', (e) => e.alias ?? null],
  ['domain', 'text', (e) => e.domain ?? null],
  ['rule_id', 'text', (e) => e.ruleId ?? null],
  ['variant_id', 'text', (e) => e.variantId ?? null],
  // A human's visitor (the address, or with IP_ANONYMIZE the daily hash): unique_visitors; empty counts as none.
  ['visitor', 'text', (e, f) => (f.isBot ? null : (e.visitor ?? e.ip)) || null],
  ['v_referrer', 'text', (e) => (e.referrer ? referrerValue(e.referrer) : DIRECT_REFERRER)],
  ['v_user_agent', 'text', (e) => (e.userAgent ? e.userAgent.slice(0, VALUE_LENGTH) : null)],
  // HONOR_GPC's count only: in the totals and top_links, in no other top list (rollup-plan.ts).
  ['count_only', 'integer', (_, f) => (f.countOnly ? 1 : 0)],
];

/** Loads the batch into click_stage (`seq`: its order, which the cap's first-seen rule follows). */
async function stage(tx: Tx, batch: readonly ClickEvent[]): Promise<void> {
  await sql`${STAGE}`.execute(tx);
  const arrays = COLUMNS.map(() => [] as unknown[]);
  for (const e of batch) {
    const f = clickFacts(e);
    COLUMNS.forEach(([, , value], i) => arrays[i]!.push(value(e, f)));
  }
  const names = sql.join(COLUMNS.map(([name]) => sql.ref(name)));
  const params = sql.join(COLUMNS.map(([, type], i) => sql`${arrays[i]}::${sql.raw(type)}[]`));
  await sql`insert into click_stage (seq, ${names}) select (ord - 1)::integer, ${names}
    from unnest(${params}) with ordinality as u(${names}, ord)`.execute(tx);
}

/**
 * Locks the batch's links in id order and returns those that still exist with their owners; clicks of a link
 * deleted meanwhile leave the staging table (they are dropped with their link, as a delete drops its clicks).
 * The lock is what keeps a deleted link's rows out: the tables written below have no foreign key to `links`
 * (migration 061), so a delete waits for this transaction and its trigger then removes what the batch wrote.
 */
async function lockLinks(tx: Tx): Promise<Map<number, LiveLink>> {
  const { rows } = await sql<{ id: string; user_id: string | null; n: string }>`select id, user_id, click_count as n
    from links where id in (select link_id from click_stage) order by id for update`.execute(tx);
  const owner = (id: string | null) => (id === null ? null : Number(id));
  const live = new Map(rows.map((r) => [Number(r.id), { owner: owner(r.user_id), clicks: Number(r.n) }]));
  const { rows: staged } = await sql<{ n: string }>`select count(distinct link_id) as n from click_stage`.execute(tx);
  if (Number(staged[0]!.n) > live.size)
    await sql`delete from click_stage s where not exists (select 1 from links l where l.id = s.link_id)`.execute(tx);
  return live;
}

/** An ISO 8601 instant (toISOString's) of a millisecond column, exactly: whole seconds, then the milliseconds. */
const isoOf = (ms: RawBuilder<unknown>) =>
  sql`to_char(to_timestamp(${ms} / 1000) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
    || '.' || lpad((${ms} % 1000)::text, 3, '0') || 'Z'`;

/**
 * The click records and, from what the insert returns (their ids), SPEC §22's `link.clicked` of each, in ONE
 * statement: the same envelope as click-events.ts builds on the embedded engine (the referrer's host by the same
 * rule; the id `evt_` and 16 random bytes, base64url, where db/events.ts puts the time first), with the link's URL
 * and owner from the row lockLinks locked.
 *
 * A click whose key is recorded already (a redelivered stream entry, or a copy another worker is writing at
 * this moment: the insert waits for its transaction) is skipped by the unique index itself (`on conflict … do
 * nothing`) and leaves click_stage in the same statement, so that no later merge counts it. No lookup by the
 * batch's time range: with many records in that range (a clock that stood still, a drain of a backlog recorded
 * within the same milliseconds) PostgreSQL joined on the time alone, and a batch took a minute at 500,000
 * records; the insert probes the index once per click whatever the records around it.
 * Consumers are woken by NOTIFY on commit.
 */
async function insertRecords(tx: Tx, at: number): Promise<void> {
  const ms = sql.ref('ev.clicked_at');
  await sql`with ins as (
      insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, click_key, is_bot,
        browser, os, device, country, imported, alias, domain, rule_id, variant_id)
      select link_id, short_code, clicked_at, ip, user_agent, referrer, click_key, is_bot,
        browser, os, device, country, 0, alias, domain, rule_id, variant_id
      from click_stage order by seq
      on conflict (click_key, clicked_at) where click_key is not null do nothing
      returning id, link_id, short_code, clicked_at, referrer, is_bot, browser, os, device, country, alias, domain,
        rule_id, variant_id, click_key
    ), skipped as (
      delete from click_stage s
      where s.click_key is not null and not exists (select from ins where ins.click_key = s.click_key)
    ), ev as (
      select ins.*, 'evt_' || rtrim(translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=') as event_id,
        lower(substring(ins.referrer from ${REFERRER_HOST_RE})) as referrer_host from ins
    )
    insert into events (event_id, type, user_id, domain_id, link_id, payload, created_at)
    select ev.event_id, 'link.clicked', l.user_id, nullif(l.domain_id, 0), l.id,
      json_build_object('id', ev.event_id, 'type', 'link.clicked', 'timestamp', ${new Date(at).toISOString()}::text,
        'data', json_build_object(
          'click', json_build_object('id', ev.id, 'clicked_at', ${isoOf(ms)}, 'domain', ev.domain,
            'short_code', ev.short_code, 'alias', ev.alias, 'country', ev.country, 'device', ev.device,
            'browser', ev.browser, 'os', ev.os, 'referrer_host', nullif(ev.referrer_host, ''), 'rule_id', ev.rule_id,
            'variant_id', ev.variant_id, 'bot', ev.is_bot = 1),
          'link', json_build_object('id', l.id, 'short_code', ev.short_code, 'domain', ev.domain,
            'original_url', l.original_url)))::text,
      ${at}::bigint
    from ev join links l on l.id = ev.link_id order by ev.id`.execute(tx);
  await sql`select pg_notify(${EVENTS_CHANNEL}, '')`.execute(tx);
}

/** click-events.ts's REFERRER_HOST as a PostgreSQL regular expression (its one group: the host). */
const REFERRER_HOST_RE = '(?i)^https?://(?:[^@/?#]*@)?([^/?#]*)';

/** The links' counters and their new distinct visitors (link_visitors), in one update of each link's row. */
async function bumpLinks(tx: Tx): Promise<void> {
  await sql`with fresh as (
      insert into link_visitors (link_id, ip) select distinct link_id, visitor from click_stage where visitor is not null
      order by 1, 2 on conflict do nothing returning link_id
    ), visitors as (select link_id, count(*) as n from fresh group by link_id),
    v as (select link_id, count(*) as clicks, sum(is_bot) as bots, min(clicked_at) as first_at, max(clicked_at) as last_at
      from click_stage group by link_id)
    update links set click_count = links.click_count + v.clicks, bot_clicks = links.bot_clicks + v.bots,
      unique_visitors = links.unique_visitors + coalesce(visitors.n, 0),
      first_click_at = case when links.first_click_at is null or v.first_at < links.first_click_at
        then v.first_at else links.first_click_at end,
      last_click_at = case when links.last_click_at is null or v.last_at > links.last_click_at
        then v.last_at else links.last_click_at end
    from v left join visitors on visitors.link_id = v.link_id where links.id = v.link_id`.execute(tx);
}

async function addHours(tx: Tx, owned: boolean): Promise<void> {
  const hour = sql`(s.clicked_at / ${HOUR_MS}) * ${HOUR_MS}`;
  await sql`insert into link_click_hourly (link_id, hour_start, clicks, bots)
    select s.link_id, ${hour}, count(*), sum(s.is_bot) from click_stage s group by 1, 2 order by 1, 2
    on conflict (link_id, hour_start) do update
      set clicks = link_click_hourly.clicks + excluded.clicks, bots = link_click_hourly.bots + excluded.bots`.execute(
    tx,
  );
  if (!owned) return;
  await sql`insert into user_click_hourly (user_id, hour_start, clicks, bots)
    select l.user_id, ${hour}, count(*), sum(s.is_bot) from click_stage s join links l on l.id = s.link_id
    where l.user_id is not null group by 1, 2 order by 1, 2
    on conflict (user_id, hour_start) do update
      set clicks = user_click_hourly.clicks + excluded.clicks, bots = user_click_hourly.bots + excluded.bots`.execute(
    tx,
  );
}

/** A human click's six daily values (rollup-plan.ts's kinds), one row each: (link_id, seq, clicked_at, short_code, kind, value). */
const HUMAN_VALUES = sql`(select s.link_id, s.seq, s.clicked_at, s.short_code, k.kind, k.value
  from click_stage s cross join lateral (values ('referrer', s.v_referrer), ('user_agent', s.v_user_agent),
    ('browser', coalesce(s.browser, ${UNKNOWN_VALUE})), ('os', coalesce(s.os, ${UNKNOWN_VALUE})), ('device', s.device),
    ('country', coalesce(s.country, ${UNKNOWN_VALUE}))) as k(kind, value)
  where s.is_bot = 0 and s.count_only = 0 and k.value is not null) h`;

/**
 * Merges `added` (owner, kind, day_start, value, clicks, first: the order the value was first seen in, uncapped)
 * into a daily-values table, capped: a value already stored keeps counting; a new one is admitted while the group
 * stores fewer than MAX_VALUES_PER_DAY (OTHER_VALUE not counted), in first-seen order; the rest is added to
 * OTHER_VALUE (daily-values.ts's capDailyGroup, the same rule). A row marked `uncapped` belongs to a group that
 * cannot reach the cap: it is admitted without the group's count or the probe for its value.
 */
async function mergeValues(
  tx: Tx,
  table: 'link_click_daily_values' | 'user_click_daily_values',
  owner: 'link_id' | 'user_id',
  added: ReturnType<typeof sql>,
): Promise<void> {
  const t = sql.table(table);
  const o = sql.ref(owner);
  await sql`with n as (${added}),
    g as (select distinct ${o}, kind, day_start from n where not uncapped),
    stored as (select g.${o}, g.kind, g.day_start, count(*) filter (where d.value <> ${OTHER_VALUE}) as distinct_n
      from g join ${t} d on d.${o} = g.${o} and d.kind = g.kind and d.day_start = g.day_start group by 1, 2, 3),
    m as (select n.*, (n.uncapped or n.value = ${OTHER_VALUE} or exists (select 1 from ${t} d
        where d.${o} = n.${o} and d.kind = n.kind and d.day_start = n.day_start and d.value = n.value)) as kept from n),
    r as (select m.${o}, m.kind, m.day_start, m.value, m.clicks, m.kept, coalesce(stored.distinct_n, 0)
        + row_number() over (partition by m.${o}, m.kind, m.day_start, m.kept order by m.first) as rank
      from m left join stored on stored.${o} = m.${o} and stored.kind = m.kind and stored.day_start = m.day_start)
    insert into ${t} (${o}, kind, day_start, value, clicks)
    select ${o}, kind, day_start, case when kept or rank <= ${MAX_VALUES_PER_DAY} then value else ${OTHER_VALUE} end, sum(clicks)
    from r group by 1, 2, 3, 4 order by 1, 2, 3, 4
    on conflict (${o}, kind, day_start, value) do update set clicks = ${t}.clicks + excluded.clicks`.execute(tx);
}

async function addDailyValues(tx: Tx, owned: boolean, small: readonly number[]): Promise<void> {
  const day = (alias: string) => sql`(${sql.ref(`${alias}.clicked_at`)} / ${DAY_MS}) * ${DAY_MS}`;
  // `small` (uncapped()): their groups cannot reach the cap, two index probes saved of each row's three. An array
  // parameter, tested by hashing: a join with `links` here was planned as a loop over the batch's links for every
  // row (the staging table has no statistics), 380 ms a batch of 1,000.
  await mergeValues(
    tx,
    'link_click_daily_values',
    'link_id',
    sql`select h.link_id, h.kind, ${day('h')} as day_start, h.value, count(*) as clicks, min(h.seq) as first,
      h.link_id = any(${small}::bigint[]) as uncapped from ${HUMAN_VALUES} group by 1, 2, 3, 4`,
  );
  if (!owned) return;
  // A user's groups see the values of their links in link order, each link's in its first-seen order, then a
  // day's human clicks per short code (kind `link`): rollup-plan.ts's planUserRollups.
  await mergeValues(
    tx,
    'user_click_daily_values',
    'user_id',
    sql`select user_id, kind, day_start, value, sum(clicks) as clicks, min(first) as first, false as uncapped from (
      select l.user_id, h.kind, ${day('h')} as day_start, h.value, count(*) as clicks, array[h.link_id, min(h.seq)] as first
      from ${HUMAN_VALUES} join links l on l.id = h.link_id where l.user_id is not null group by l.user_id, h.link_id, 2, 3, 4
      union all
      select l.user_id, 'link', ${day('s')}, s.short_code, count(*), array[s.link_id, 0]
      from click_stage s join links l on l.id = s.link_id where l.user_id is not null and s.is_bot = 0 group by l.user_id, s.link_id, 3, 4
    ) per_link group by 1, 2, 3, 4`,
  );
}

/**
 * The human clicks a rule or a variant routed (SPEC §21), per link, day, kind, id and visitor ('' for none):
 * rollup-plan.ts's choices. Only for a batch that has any (`routed`): links without rules pay no statement.
 */
async function addChoices(tx: Tx): Promise<void> {
  const day = sql`(s.clicked_at / ${DAY_MS}) * ${DAY_MS}`;
  await sql`insert into link_click_daily_choices (link_id, day_start, kind, value, visitor, clicks)
    select s.link_id, ${day}, k.kind, k.value, coalesce(s.visitor, ''), count(*)
    from click_stage s cross join lateral (values ('rule', s.rule_id), ('variant', s.variant_id)) as k(kind, value)
    where s.is_bot = 0 and k.value is not null group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
    on conflict (link_id, day_start, kind, value, visitor) do update
      set clicks = link_click_daily_choices.clicks + excluded.clicks`.execute(tx);
}

/**
 * The links of `live` whose clicks so far and in `batch` are at most MAX_VALUES_PER_DAY: no day of theirs holds
 * more values (the embedded writer's rule, sqlite-rollup-writer.ts's addCapped; uniform traffic: most links).
 */
function uncapped(batch: readonly ClickEvent[], live: ReadonlyMap<number, LiveLink>): number[] {
  const inBatch = new Map<number, number>();
  for (const e of batch) inBatch.set(e.linkId, (inBatch.get(e.linkId) ?? 0) + 1);
  return [...live].filter(([id, link]) => link.clicks + inBatch.get(id)! <= MAX_VALUES_PER_DAY).map(([id]) => id);
}

/**
 * Writes a batch of live clicks inside `tx` as sets (see above), but those whose key is recorded already;
 * returns the batch's links that still exist, with their owners. The caller marks data_fresh_as_of.
 */
export async function writeSetsIn(tx: Tx, batch: readonly ClickEvent[]): Promise<ReadonlyMap<number, LiveLink>> {
  await stage(tx, batch);
  const live = await lockLinks(tx);
  if (live.size === 0) return live;
  // Anonymous links only: the per-user rollups have nothing to add (three statements saved).
  const owned = [...live.values()].some((link) => link.owner !== null);
  await insertRecords(tx, Date.now());
  await bumpLinks(tx);
  await addHours(tx, owned);
  await addDailyValues(tx, owned, uncapped(batch, live));
  if (batch.some((e) => e.ruleId != null || e.variantId != null)) await addChoices(tx);
  return live;
}
