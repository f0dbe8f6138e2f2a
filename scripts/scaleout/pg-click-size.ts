/**
 * PostgreSQL bytes per click record (table and indexes, the click key included) for the sizing table of
 * docs/deployment.md: a fresh database, migrated, 1,000,000 records over 100,000 links in this month's
 * partition (written with SQL: the rows are what matters here, not the writer).
 *
 *   npx tsx scripts/scaleout/pg-click-size.ts [count=1000000]
 */
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { createStorage } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';

const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const COUNT = Number(process.argv[2] ?? 1_000_000);
const LINKS = 100_000;
const name = `ferry_size_${process.pid}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`create database ${name}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
const storage = createStorage(loadConfig({ DATABASE_URL: url.toString() }));
const db = storage.db as unknown as Kysely<unknown>;
try {
  await migrateToLatest(db, storage.dialect);
  await sql`insert into links (short_code, original_url, created_at) select 'c' || g, 'https://example.com/articles/' || g, 0 from generate_series(1, ${LINKS}) g`.execute(
    db,
  );
  await sql`insert into link_codes (code, link_id) select short_code, id from links`.execute(db);
  const now = Date.now();
  await sql`insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer, click_key)
    select 1 + g % ${LINKS}, 'c' || (1 + g % ${LINKS}), cast(${now} as bigint) - g, '203.0.' || (g / 256 % 256) || '.' || (g % 256),
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
      'https://news.example.com/', gen_random_uuid()
    from generate_series(1, ${COUNT}) g`.execute(db);
  await sql`vacuum analyze clicks`.execute(db);
  const size = await sql<{
    table: number;
    indexes: number;
  }>`select sum(pg_table_size(c.oid))::bigint as table, sum(pg_indexes_size(c.oid))::bigint as indexes
    from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'clicks'::regclass`.execute(db);
  const { table, indexes } = size.rows[0]!;
  const per = (b: number) =>
    `${(Number(b) / COUNT).toFixed(0)} B per record, ${(((Number(b) / COUNT) * 1e6) / 2 ** 20).toFixed(0)} MiB per million`;
  process.stdout.write(
    `click records: table ${per(table)}; indexes ${per(indexes)}; total ${per(Number(table) + Number(indexes))}\n`,
  );
  const byIndex = await sql<{
    index: string;
    bytes: number;
  }>`select pi.indexrelid::regclass::text as index, sum(pg_relation_size(ci.inhrelid))::bigint as bytes
    from pg_index pi join pg_inherits ci on ci.inhparent = pi.indexrelid where pi.indrelid = 'clicks'::regclass group by 1 order by 1`.execute(
    db,
  );
  for (const r of byIndex.rows) process.stdout.write(`  index ${r.index}: ${per(r.bytes)}\n`);
} finally {
  await storage.close();
  await admin.query(`drop database ${name} with (force)`);
  await admin.end();
}
