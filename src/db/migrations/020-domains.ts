import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Domains (SPEC §19): a link belongs to a domain, and codes are unique per domain.
 *
 * - `domains`: one row per host name (stored lower case, so the unique index compares them ignoring case),
 *   with its verification token, its fallbacks and the state of its daily re-check.
 * - The default domain (the host of PUBLIC_BASE_URL) is not a row: it is domain id 0 wherever a domain id is
 *   a key, so every existing link and code lands on it without a write per row.
 * - `link_codes` becomes the namespace of (domain_id, code): one lookup by (domain, code) decides a visit.
 *   `link_id` names the link a code stands for (set for live codes and kept in tombstones), so that other
 *   names of a link (aliases, 64 characters at most) can join the same namespace and the same lookup.
 * - `links.short_code` is unique per domain: (domain_id, short_code).
 *
 * On SQLite a primary key or an inline UNIQUE cannot be dropped, so link_codes and links are rebuilt (the
 * documented twelve-step procedure): foreign keys off, a new table, every row copied with its id, the old one
 * dropped, the new one renamed, the indexes made again, the foreign keys checked, in one transaction.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .addIdColumn(db.schema.createTable('domains'))
    .addColumn('hostname', 'varchar(253)', (c) => c.notNull().unique())
    .addColumn('owner_id', d.bigint, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('token', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('verified_at', d.bigint)
    .addColumn('scheme', 'varchar(5)')
    .addColumn('root_redirect', 'varchar(2048)')
    .addColumn('not_found_redirect', 'varchar(2048)')
    .addColumn('expired_redirect', 'varchar(2048)')
    .addColumn('checked_at', d.bigint)
    .addColumn('failing_since', d.bigint)
    .addColumn('check_message', 'varchar(512)')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .addColumn('updated_at', d.bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('domains_owner_idx').on('domains').columns(['owner_id', 'id']).execute();
  await db.schema.createIndex('domains_checked_idx').on('domains').columns(['verified_at', 'checked_at']).execute();

  if (d.name === 'postgres') await upPostgres(db);
  else await upSqlite(db);
}

async function upPostgres(db: Kysely<unknown>): Promise<void> {
  await sql`alter table links drop constraint links_short_code_fkey`.execute(db);
  await sql`alter table links drop constraint links_short_code_key`.execute(db);
  await sql`alter table links add column domain_id bigint not null default 0`.execute(db);
  await sql`create unique index links_domain_code_idx on links (domain_id, short_code)`.execute(db);

  await sql`alter table link_codes drop constraint link_codes_pkey`.execute(db);
  await sql`alter table link_codes add column domain_id bigint not null default 0`.execute(db);
  await sql`alter table link_codes add column link_id bigint`.execute(db);
  await sql`alter table link_codes alter column code type varchar(64) collate "C"`.execute(db);
  await sql`alter table link_codes add primary key (domain_id, code)`.execute(db);
  await sql`update link_codes c set link_id = l.id from links l where l.short_code = c.code`.execute(db);
}

/** The CREATE statement and indexes of a table, as SQLite keeps them. */
export async function sqliteDefinition(
  db: Kysely<unknown>,
  table: string,
): Promise<{ create: string; indexes: string[] }> {
  const rows = (
    await sql<{
      type: string;
      sql: string | null;
    }>`select type, sql from sqlite_master where tbl_name = ${table}`.execute(db)
  ).rows;
  const create = rows.find((r) => r.type === 'table')?.sql;
  if (!create) throw new Error(`no table ${table}`);
  return { create, indexes: rows.filter((r) => r.type === 'index' && r.sql !== null).map((r) => r.sql!) };
}

/** Swaps `table` for a copy made by `create` (the new table's statement, named `${table}_new`) and `copy`. */
export async function rebuildSqliteTable(
  db: Kysely<unknown>,
  table: string,
  create: string,
  copy: string,
  indexes: string[],
): Promise<void> {
  const seq = (
    await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`
      .execute(db)
      .catch(() => ({ rows: [] }))
  ).rows[0]?.seq;
  await sql.raw(create).execute(db);
  await sql.raw(copy).execute(db);
  await sql.raw(`drop table "${table}"`).execute(db);
  await sql.raw(`alter table "${table}_new" rename to "${table}"`).execute(db);
  for (const index of indexes) await sql.raw(index).execute(db);
  // AUTOINCREMENT: ids of deleted rows are never handed out again, whatever the copy's highest id.
  if (seq !== undefined) await sql`update sqlite_sequence set seq = max(seq, ${seq}) where name = ${table}`.execute(db);
}

/**
 * Runs `rebuild` (its tables swapped by rebuildSqliteTable) as SQLite asks of a schema change it cannot ALTER:
 * foreign keys off, one immediate transaction, every foreign key checked before the commit.
 */
export async function inSqliteRebuild(db: Kysely<unknown>, rebuild: () => Promise<void>): Promise<void> {
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin immediate`.execute(db);
    try {
      await rebuild();
      const broken = (await sql`pragma foreign_key_check`.execute(db)).rows;
      if (broken.length) throw new Error(`foreign keys broken by the rebuild: ${JSON.stringify(broken.slice(0, 5))}`);
      await sql`commit`.execute(db);
    } catch (err) {
      await sql`rollback`.execute(db);
      throw err;
    }
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}

async function upSqlite(db: Kysely<unknown>): Promise<void> {
  const links = await sqliteDefinition(db, 'links');
  const withoutUnique = links.create.replace(
    /"short_code" varchar\(8\) collate binary not null unique references "link_codes" \("code"\)/,
    '"short_code" varchar(8) collate binary not null',
  );
  if (withoutUnique === links.create) throw new Error('links: unexpected definition of short_code');
  const columns = (await sql<{ name: string }>`select name from pragma_table_info('links')`.execute(db)).rows
    .map((r) => `"${r.name}"`)
    .join(', ');
  const linksCreate = withoutUnique
    .replace(/^CREATE TABLE "links" \(/, 'CREATE TABLE "links_new" (')
    .replace(/\)$/, ', "domain_id" integer default 0 not null)');

  await inSqliteRebuild(db, async () => {
    await rebuildSqliteTable(
      db,
      'links',
      linksCreate,
      `insert into links_new (${columns}) select ${columns} from links`,
      [...links.indexes, 'create unique index "links_domain_code_idx" on "links" ("domain_id", "short_code")'],
    );
    await rebuildSqliteTable(
      db,
      'link_codes',
      'create table "link_codes_new" ("domain_id" integer default 0 not null, "code" varchar(64) collate binary not null, "link_id" integer, ' +
        '"retired_at" integer, "retired_reason" varchar(16), primary key ("domain_id", "code")) without rowid',
      'insert into link_codes_new (domain_id, code, link_id, retired_at, retired_reason) ' +
        'select 0, c.code, l.id, c.retired_at, c.retired_reason from link_codes c left join links l on l.short_code = c.code',
      [],
    );
  });
}
