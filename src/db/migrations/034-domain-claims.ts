import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { inSqliteRebuild, rebuildSqliteTable, sqliteDefinition } from './020-domains.js';

/**
 * Claims of a host name (SPEC §25 "Nobody can squat a domain"): until a name is verified, several users may
 * each hold a claim of it (a row of `domains` with its own token); the first to verify owns the name and the
 * other claims are removed.
 *
 * - `hostname` is no longer unique by itself: it is unique among verified rows (a partial unique index, the
 *   arbiter when two claims verify at once), and per owner (one claim of a name per user).
 * - On SQLite an inline UNIQUE cannot be dropped, so `domains` is rebuilt (as 020 rebuilt links): foreign
 *   keys off, a copy with every row and id, the old table dropped, the copy renamed, in one transaction.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name === 'postgres') await sql`alter table domains drop constraint domains_hostname_key`.execute(db);
  else await upSqlite(db);
  await sql`create unique index domains_verified_hostname_idx on domains (hostname) where verified_at is not null`.execute(
    db,
  );
  await sql`create unique index domains_claim_idx on domains (hostname, owner_id)`.execute(db);
}

async function upSqlite(db: Kysely<unknown>): Promise<void> {
  const domains = await sqliteDefinition(db, 'domains');
  const create = domains.create
    .replace('"hostname" varchar(253) not null unique', '"hostname" varchar(253) not null')
    .replace(/^CREATE TABLE "domains" \(/, 'CREATE TABLE "domains_new" (');
  if (create.includes('not null unique, "owner_id"') || !create.startsWith('CREATE TABLE "domains_new"')) {
    throw new Error('domains: unexpected definition of hostname');
  }
  const names = (await sql<{ name: string }>`select name from pragma_table_info('domains')`.execute(db)).rows;
  const columns = names.map((r) => `"${r.name}"`).join(', ');
  const copy = `insert into domains_new (${columns}) select ${columns} from domains`;
  await inSqliteRebuild(db, () => rebuildSqliteTable(db, 'domains', create, copy, domains.indexes));
}
