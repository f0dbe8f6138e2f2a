import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * `link_changes` (embedded engine only): the link changes that another process (the `ferry` CLI: an import,
 * a link disabled) made while a server holds the database, for that server's redirect cache, which otherwise
 * learns of a change only from the change the server itself makes. Written in the change's own transaction
 * (so the row exists if and only if the change committed) and read by the server every few hundred
 * milliseconds from the last `seq` it saw (infra/sqlite-link-change-feed.ts). PostgreSQL has LISTEN/NOTIFY
 * for this (infra/pg-link-cache-bus.ts) and no such table.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name !== 'sqlite') return;
  await sql`create table link_changes (
    seq integer primary key autoincrement,
    message varchar(400) not null,
    at integer not null
  )`.execute(db);
}
