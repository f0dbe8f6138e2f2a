/**
 * The instance of `npm run bench:scale` (issue 37 item 6), generated straight into the database: the links of
 * bench/lib/million-seed.ts (a million at a time), then the click records day by day, each day with what Ferry's
 * click writer would have written for its records: the links' counters and distinct visitors, the hourly and
 * daily rollups of the links and of their owner, the daily top values capped as the writer caps them. Each is
 * one INSERT … SELECT … GROUP BY over the day's records, by rollups/pg-set-writer.ts's rules; a test
 * (test/bench/scale-seed.test.ts) feeds the same records through Ferry's own writer and compares every table.
 * Ferry's writer would take about 20 minutes more for 100 M clicks (87,000 a second); this takes the time to
 * insert them.
 *
 * Click i (0-based) of `clicks`, over `days` days ending an hour before `now`:
 * - at start + ⌊i × span / clicks⌋: in time order, as a live instance writes them;
 * - every tenth to the hot link (link ⌊links / 2⌋: `hotCode`); the rest in runs: the clicks are cut into
 *   `runs` runs, and run g sends its clicks round robin (i mod 101) to 101 links spread over every link — a link
 *   shared once and clicked for a few hours;
 * - its visitor's profile (i + ⌊i / 10⌋) mod 60 of 60: a user agent of 20 (19 of 7 browsers, one of a crawler:
 *   5 % bots), described by Ferry's own parser (clickFacts), a referrer of 13 (3 direct), a country of 12 (or
 *   none, one profile in 25); its address one of 65,536 (`10.a.b.1`, the next one every 1,000 clicks): a link of a run gets
 *   about 100 distinct visitors.
 * No `link.clicked` events are written: the event feed is not what the benchmark measures.
 */
import path from 'node:path';
import { Kysely, SqliteDialect, sql, type RawBuilder, type Transaction } from 'kysely';
import { createClickPartitions } from '../../src/db/click-partitions.js';
import type { Storage } from '../../src/db/database.js';
import { SqliteDatabase } from '../../src/db/sqlite-driver.js';
import type { Database } from '../../src/db/types.js';
import { MAX_VALUES_PER_DAY, OTHER_VALUE } from '../../src/modules/clicks/rollups/daily-values.js';
import { DIRECT_REFERRER, UNKNOWN_VALUE } from '../../src/modules/clicks/event/dimensions.js';
import { clickFacts, DAY_MS, HOUR_MS, referrerValue } from '../../src/modules/clicks/rollups/rollup-plan.js';
import { codeSql, insertLinks, insertNames, MILLION, series } from './million-seed.js';

export interface ScalePlan {
  userId: number;
  links: number;
  clicks: number;
  days: number;
  /** runs the non-hot clicks are cut into (default 1,000: a run of 100 M clicks is 90,000 clicks over 9 hours) */
  runs?: number;
  now: number;
}

const RUN_LINKS = 101;
const LINKS_PER_TRANSACTION = 1_000_000;
const BROWSERS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
];
const CRAWLER = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const AGENTS = Array.from({ length: 20 }, (_, k) => (k === 19 ? CRAWLER : BROWSERS[k % BROWSERS.length]!));
const REFERRERS = [
  null,
  null,
  null,
  'https://www.google.com/',
  'https://t.co/x1y2z3',
  'https://news.ycombinator.com/item?id=4242',
  'https://www.reddit.com/r/programming/comments/abc/',
  'https://www.facebook.com/',
  'https://mail.example.org/inbox/42',
  'https://www.linkedin.com/feed/',
  'https://duckduckgo.com/',
  'https://github.com/ferry/ferry/issues/1',
  'https://bsky.app/profile/someone',
];
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'CA', 'NL', 'ES', 'IT', 'PL'];
const COUNTRY_OF = [...COUNTRIES, ...COUNTRIES.slice(0, 12), null];

/** Link ⌊links / 2⌋'s code: the link every tenth click visits. */
export const hotCode = (links: number): string => MILLION.codeOf(Math.floor(links / 2));

/** Where the seed writes: a storage's database (the tests'), or the benchmark's own connection (openSeeding). */
export interface SeedTarget {
  db: Kysely<Database>;
  postgres: boolean;
}

export const seedTargetOf = (storage: Storage): SeedTarget => ({ db: storage.db, postgres: storage.sqlite === null });

/**
 * The embedded database of `dataDir` (migrated, the server stopped), opened for the seed alone: the rollback
 * journal in memory instead of the write-ahead log (which writes each page twice), no syncs, no foreign key
 * checks (the rows are made from the links), scratch tables in memory, a 2 GB page cache. A seed killed halfway
 * leaves a broken file, which the benchmark deletes; the server's next start turns the write-ahead log back on.
 */
export function openSeeding(dataDir: string): SeedTarget & { close(): Promise<void> } {
  const sqlite = new SqliteDatabase(path.join(dataDir, 'ferry.db'));
  // Only DELETE leaves the write-ahead log; from there, MEMORY.
  sqlite.pragma('journal_mode = DELETE');
  sqlite.pragma('journal_mode = MEMORY');
  sqlite.pragma('synchronous = OFF');
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma('cache_size = -2097152');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, postgres: false, close: () => db.destroy() };
}

/** The links of `userId`, a million per transaction (bench/lib/million-seed.ts's, without clicks). */
export async function seedScaleLinks(target: SeedTarget, userId: number, count: number, now: number): Promise<void> {
  const { db, postgres } = target;
  for (let from = 1; from <= count; from += LINKS_PER_TRANSACTION) {
    const to = Math.min(count, from + LINKS_PER_TRANSACTION - 1);
    await db.transaction().execute(async (tx) => {
      await insertLinks(tx, postgres, userId, { from, to, count, counted: false }, now);
      await insertNames(tx, userId, { from: MILLION.codeOf(from), to: MILLION.codeOf(to) });
    });
  }
}

/** A visitor's browser, referrer and country: click i has profile (i + ⌊i / 10⌋) mod 60 (the hot link's too). */
const PROFILES = Array.from({ length: 60 }, (_, p) => {
  const userAgent = AGENTS[p % AGENTS.length]!;
  const referrer = REFERRERS[p % REFERRERS.length]!;
  const f = clickFacts({ linkId: 0, shortCode: '', clickedAt: 0, ip: null, userAgent, referrer });
  const country = COUNTRY_OF[p % COUNTRY_OF.length]!;
  const vReferrer = referrer === null ? DIRECT_REFERRER : referrerValue(referrer);
  return [p, userAgent, referrer, f.isBot ? 1 : 0, f.browser, f.os, f.device, country, vReferrer] as const;
});

/** Where click i goes and when, as SQL of `i`. */
function clickColumns(plan: Required<ScalePlan>, postgres: boolean) {
  const span = plan.days * DAY_MS;
  const start = plan.now - HOUR_MS - span;
  const perRun = Math.ceil(plan.clicks / plan.runs);
  const stride = Math.max(1, Math.floor(plan.links / (plan.runs * RUN_LINKS)));
  const i = sql.ref('i');
  const slot = sql`${i} / ${sql.lit(perRun)} * ${sql.lit(RUN_LINKS)} + ${i} % ${sql.lit(RUN_LINKS)}`;
  const n = sql`case when ${i} % 10 = 0 then ${sql.lit(Math.floor(plan.links / 2))}
    else 1 + (${slot}) * ${sql.lit(stride)} % ${sql.lit(plan.links)} end`;
  return {
    start,
    span,
    code: codeSql(postgres, n),
    clickedAt: sql`${sql.lit(start)} + ${i} * ${sql.lit(span)} / ${sql.lit(plan.clicks)}`,
    profile: sql`(${i} + ${i} / 10) % ${sql.lit(PROFILES.length)}`,
    ip: sql`'10.' || (${i} / 256000 % 256) || '.' || (${i} / 1000 % 256) || '.1'`,
  };
}

type Tx = Transaction<Database>;

/**
 * The day's clicks (`bench_scale_stage`), and the same counted per link and profile (`bench_scale_groups`, with
 * the first click of each): the top lists are counted from the groups, a few per link and day.
 */
const TABLES = (postgres: boolean) => {
  const scratch = postgres ? sql`create unlogged table` : sql`create temp table`;
  return [
    sql`${scratch} bench_scale_profiles (p integer primary key, user_agent text, referrer text, is_bot integer not null,
      browser text, os text, device text, country text, v_referrer text not null)`,
    sql`${scratch} bench_scale_stage (i ${postgres ? sql`bigint` : sql`integer`} primary key, link_id bigint not null,
      short_code text not null,
      clicked_at bigint not null, p integer not null, is_bot integer not null, ip text not null)`,
    sql`${scratch} bench_scale_groups (link_id bigint not null, short_code text not null, p integer not null,
      clicks bigint not null, first bigint not null)`,
    sql`${scratch} bench_scale_links (link_id bigint primary key, clicks bigint not null, bots bigint not null,
      first_at bigint not null, last_at bigint not null)`,
  ];
};

/** rollup-plan.ts's six kinds of top list, and each one's value from a profile (null: none). */
const KINDS: ReadonlyArray<[kind: string, value: RawBuilder<unknown>]> = [
  ['referrer', sql`pr.v_referrer`],
  ['user_agent', sql`substr(pr.user_agent, 1, 255)`],
  ['browser', sql`coalesce(pr.browser, ${UNKNOWN_VALUE})`],
  ['os', sql`coalesce(pr.os, ${UNKNOWN_VALUE})`],
  ['device', sql`pr.device`],
  ['country', sql`coalesce(pr.country, ${UNKNOWN_VALUE})`],
];

/** The human click groups' top-list values: (link_id, short_code, clicks, first, kind, value). */
const HUMAN_VALUES = sql`(${sql.join(
  KINDS.map(
    ([
      kind,
      value,
    ]) => sql`select g.link_id, g.short_code, g.clicks, g.first, ${sql.lit(kind)} as kind, ${value} as value
      from bench_scale_groups g join bench_scale_profiles pr on pr.p = g.p where pr.is_bot = 0 and ${value} is not null`,
  ),
  sql` union all `,
)})`;

/**
 * The day's top values of `table`, from `counted` (owner, kind, value, clicks, first: the click that first showed
 * the value): a new day, so the first MAX_VALUES_PER_DAY values of each group in first-seen order are stored and
 * the rest counted as OTHER_VALUE (pg-set-writer.ts's mergeValues with nothing stored yet).
 */
async function insertDailyValues(
  tx: Tx,
  table: 'link_click_daily_values' | 'user_click_daily_values',
  owner: 'link_id' | 'user_id',
  day: number,
  counted: RawBuilder<unknown>,
): Promise<void> {
  const o = sql.ref(owner);
  await sql`with n as (${counted}),
    r as (select n.*, row_number() over (partition by ${o}, kind order by first) as rank from n)
    insert into ${sql.table(table)} (${o}, kind, day_start, value, clicks)
    select ${o}, kind, ${sql.lit(day)}, case when rank <= ${sql.lit(MAX_VALUES_PER_DAY)} then value else ${OTHER_VALUE} end, sum(clicks)
    from r group by 1, 2, 4`.execute(tx);
}

/** The records of clicks lo..hi-1 (one UTC day, `day`) and what the writer would have written for them. */
async function seedDay(
  tx: Tx,
  plan: Required<ScalePlan>,
  postgres: boolean,
  range: { lo: number; hi: number; day: number },
): Promise<void> {
  const c = clickColumns(plan, postgres);
  // Each click's link by its code, looked up in the index one by one. PostgreSQL would take the code's trigram
  // index for the equality (its estimate is one row either way), which reads every link holding `m00`: without
  // bitmap scans, the only way a GIN index is read, it takes the b-tree. No JIT for statements run once a day.
  if (postgres) await sql`set local enable_bitmapscan = off; set local jit = off`.execute(tx);
  const link = postgres
    ? sql`cross join lateral (select id, short_code from links where domain_id = 0 and short_code = ${c.code}) l`
    : sql`join links l on l.domain_id = 0 and l.short_code = ${c.code}`;
  // PostgreSQL's DELETE leaves the day's rows dead for the next day's scans to step over.
  for (const table of [sql`bench_scale_stage`, sql`bench_scale_groups`])
    await (postgres ? sql`truncate ${table}` : sql`delete from ${table}`).execute(tx);
  await sql`with ${series(postgres, range.lo, range.hi - 1)}
    insert into bench_scale_stage (i, link_id, short_code, clicked_at, p, is_bot, ip)
    select s.i, l.id, l.short_code, ${c.clickedAt}, pr.p, pr.is_bot, ${c.ip}
    from s ${link} join bench_scale_profiles pr on pr.p = ${c.profile}`.execute(tx);
  await sql`insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, is_bot, browser, os, device, country)
    select s.link_id, s.short_code, s.clicked_at, s.ip, pr.user_agent, pr.referrer, pr.is_bot, pr.browser, pr.os, pr.device,
      pr.country
    from bench_scale_stage s join bench_scale_profiles pr on pr.p = s.p order by s.i`.execute(tx);
  await sql`insert into bench_scale_groups (link_id, short_code, p, clicks, first)
    select link_id, short_code, p, count(*), min(i) from bench_scale_stage group by link_id, short_code, p`.execute(tx);
  const hour = sql`clicked_at / ${sql.lit(HOUR_MS)} * ${sql.lit(HOUR_MS)}`;
  await sql`insert into link_click_hourly (link_id, hour_start, clicks, bots)
    select link_id, ${hour}, count(*), sum(is_bot) from bench_scale_stage group by 1, 2`.execute(tx);
  await sql`insert into user_click_hourly (user_id, hour_start, clicks, bots)
    select ${sql.lit(plan.userId)}, ${hour}, count(*), sum(is_bot) from bench_scale_stage group by 2`.execute(tx);
  await insertDailyValues(
    tx,
    'link_click_daily_values',
    'link_id',
    range.day,
    sql`select link_id, kind, value, sum(clicks) as clicks, min(first) as first from ${HUMAN_VALUES} h group by 1, 2, 3`,
  );
  // The owner's: the same kinds over all their links, and the day's human clicks per short code (`link`).
  await insertDailyValues(
    tx,
    'user_click_daily_values',
    'user_id',
    range.day,
    sql`select ${sql.lit(plan.userId)} as user_id, kind, value, sum(clicks) as clicks, min(first) as first
      from ${HUMAN_VALUES} h group by 2, 3
      union all select ${sql.lit(plan.userId)}, 'link', g.short_code, sum(g.clicks), min(g.first)
      from bench_scale_groups g join bench_scale_profiles pr on pr.p = g.p where pr.is_bot = 0 group by 3`,
  );
  await sql`insert into link_visitors (link_id, ip) select distinct link_id, ip from bench_scale_stage where is_bot = 0
    on conflict do nothing`.execute(tx);
  await sql`insert into bench_scale_links (link_id, clicks, bots, first_at, last_at)
    select link_id, count(*), sum(is_bot), min(clicked_at), max(clicked_at) from bench_scale_stage where true group by link_id
    on conflict (link_id) do update set clicks = bench_scale_links.clicks + excluded.clicks,
      bots = bench_scale_links.bots + excluded.bots, last_at = excluded.last_at`.execute(tx);
}

/** Clicks i ≥ lo of a UTC day: the first i whose instant is at or after `at`. */
function firstClickAt(at: number, start: number, span: number, clicks: number): number {
  if (at <= start) return 0;
  const n = BigInt(at - start) * BigInt(clicks);
  const lo = (n + BigInt(span) - 1n) / BigInt(span);
  return Number(lo > BigInt(clicks) ? BigInt(clicks) : lo);
}

/**
 * Writes `plan.clicks` click records of the plan's links (seeded first), day by day, one transaction a day;
 * `progress` hears each day's end. On PostgreSQL the months' partitions are created first, as the maintenance
 * job would have over the year.
 */
export async function seedScaleClicks(
  target: SeedTarget,
  partial: ScalePlan,
  progress: (done: number) => void = () => {},
): Promise<void> {
  const plan: Required<ScalePlan> = { runs: 1_000, ...partial };
  const { db, postgres } = target;
  const { start, span } = clickColumns(plan, postgres);
  if (postgres) {
    // The links' statistics first (autovacuum's, soon after their insert): without them the planner takes the
    // table for a few dozen rows and hashes all of it to find a day's links.
    await sql`analyze links`.execute(db);
    const months = Array.from({ length: Math.ceil(plan.days / 28) + 1 }, (_, k) => start + k * 28 * DAY_MS);
    await (db as unknown as Kysely<unknown>).transaction().execute((tx) => createClickPartitions(tx, plan.now, months));
  }
  for (const table of TABLES(postgres)) await table.execute(db);
  await db.transaction().execute(async (tx) => {
    for (const row of PROFILES)
      await sql`insert into bench_scale_profiles (p, user_agent, referrer, is_bot, browser, os, device, country, v_referrer)
        values (${sql.join(row)})`.execute(tx);
  });
  try {
    for (let day = Math.floor(start / DAY_MS) * DAY_MS; day < start + span; day += DAY_MS) {
      const lo = firstClickAt(day, start, span, plan.clicks);
      const hi = firstClickAt(day + DAY_MS, start, span, plan.clicks);
      if (hi > lo) await db.transaction().execute((tx) => seedDay(tx, plan, postgres, { lo, hi, day }));
      progress(hi);
    }
    await db.transaction().execute(async (tx) => {
      await sql`update links set click_count = a.clicks, bot_clicks = a.bots, first_click_at = a.first_at,
        last_click_at = a.last_at, unique_visitors = (select count(*) from link_visitors v where v.link_id = a.link_id)
        from bench_scale_links a where links.id = a.link_id`.execute(tx);
    });
  } finally {
    for (const table of ['bench_scale_stage', 'bench_scale_groups', 'bench_scale_links', 'bench_scale_profiles'])
      await sql`drop table if exists ${sql.table(table)}`.execute(db);
  }
}
