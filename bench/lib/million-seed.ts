/**
 * A million links for one user, generated straight into the database by one INSERT … SELECT per table (a
 * recursive CTE on SQLite, generate_series on PostgreSQL): the benchmark measures serving, not creating, and
 * the API would take minutes to bring them in. Every row is what the API would have written: the link, its
 * names in link_codes, its tags in link_tags; the search index (migration 039) fills itself from the links
 * table's triggers on SQLite and from the GIN indexes on PostgreSQL, and the owners' counters (migration 050)
 * from the links table's triggers on both, as for any other write.
 *
 * Link i (1-based): code `m` + i in 7 hex digits, URL https://example.com/articles/<i>?utm_source=bench,
 * title "Article <i> about topic<i % 1000>", created one second after link i-1 (ending now), click_count
 * (i × 7919) mod 1000, tags `common` on even links and `rare` too on every hundredth, and an alias
 * `old-slug-<i>` on every hundredth.
 */
import { sql, type Kysely } from 'kysely';
import { createStorage } from '../../src/db/database.js';
import type { Database } from '../../src/db/types.js';

export const MILLION = {
  codeOf: (i: number) => `m${i.toString(16).padStart(7, '0')}`,
  aliasOf: (i: number) => `old-slug-${i}`,
};

/**
 * Numbers from..to as a table `s(i)`, with its WITH clause's keyword (SQLite has no generate_series without its
 * extension: a recursive CTE).
 */
export const series = (postgres: boolean, from: number, to: number) =>
  postgres
    ? sql`s(i) as (select generate_series(${sql.lit(from)}::bigint, ${sql.lit(to)}::bigint))`
    : sql`recursive s(i) as (select ${sql.lit(from)} union all select i + 1 from s where i < ${sql.lit(to)})`;

/** Link i's code from the column `i`: MILLION.codeOf in SQL. */
export const codeSql = (postgres: boolean, i = sql.ref('i')) =>
  postgres ? sql`'m' || lpad(to_hex(${i}), 7, '0')` : sql`'m' || printf('%07x', ${i})`;

/**
 * Links `from`..`to` (1-based, inclusive) of `count`; link i is created (count - i) seconds before `now`.
 * `counted`: each link's click_count is (i × 7919) mod 1000 (no record behind it: the lists' order by clicks);
 * otherwise 0, for a seed that writes the click records and counters itself (bench/lib/scale-seed.ts).
 */
export async function insertLinks(
  db: Kysely<Database>,
  postgres: boolean,
  userId: number,
  range: { from: number; to: number; count: number; counted: boolean },
  now: number,
): Promise<void> {
  const { from, to, count } = range;
  await sql`
    with ${series(postgres, from, to)}
    insert into links (domain_id, short_code, user_id, original_url, created_at, updated_at, click_count, title, aliases, tags)
    select 0, ${codeSql(postgres)}, ${userId}, 'https://example.com/articles/' || i || '?utm_source=bench',
      ${now} - (${count} - i) * 1000, ${now} - (${count} - i) * 1000, ${range.counted ? sql`(i * 7919) % 1000` : sql`0`},
      'Article ' || i || ' about topic' || (i % 1000),
      case when i % 100 = 0 then 'old-slug-' || i else '' end,
      case when i % 100 = 0 then 'common,rare' when i % 2 = 0 then 'common' else '' end
    from s`.execute(db);
}

/** The names and tags of the user's links whose codes lie in [from, to] (all of them without a range). */
export async function insertNames(
  db: Kysely<Database>,
  userId: number,
  codes?: { from: string; to: string },
): Promise<void> {
  const mine = codes
    ? sql`user_id = ${userId} and short_code >= ${codes.from} and short_code <= ${codes.to}`
    : sql`user_id = ${userId}`;
  await sql`insert into link_codes (domain_id, code, link_id, retired_at, retired_reason)
    select 0, short_code, id, null, null from links where ${mine}`.execute(db);
  await sql`insert into link_codes (domain_id, code, link_id, retired_at, retired_reason)
    select 0, aliases, id, null, null from links where ${mine} and aliases <> ''`.execute(db);
  await sql`insert into link_tags (link_id, tag) select id, 'common' from links where ${mine} and tags <> ''`.execute(
    db,
  );
  await sql`insert into link_tags (link_id, tag) select id, 'rare' from links where ${mine} and tags = 'common,rare'`.execute(
    db,
  );
}

/** Seeds `count` links for `userId` into the server's database (the server stopped); returns the seconds it took. */
export async function seedMillion(
  target: { databaseUrl: string | null; dataDir: string },
  userId: number,
  count: number,
  now: number,
): Promise<number> {
  const started = performance.now();
  const storage = createStorage({ ...target, dbPoolMax: 1 });
  const postgres = target.databaseUrl !== null;
  try {
    if (storage.sqlite) storage.sqlite.pragma('cache_size = -262144');
    await storage.db.transaction().execute(async (tx) => {
      await insertLinks(tx, postgres, userId, { from: 1, to: count, count, counted: true }, now);
      await insertNames(tx, userId);
    });
    // What autovacuum does within a minute of such an insert; SQLite has no statistics unless told (Ferry never
    // runs ANALYZE), so its plans here are the ones a real instance gets.
    if (postgres) await sql`analyze`.execute(storage.db);
  } finally {
    await storage.close();
  }
  return (performance.now() - started) / 1000;
}
