import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Aliases (SPEC §20): further names of a link on its domain, in the namespace codes already share.
 *
 * - An alias is a row of `link_codes` (domain_id, code, link_id) like the link's own code (migration 020 made
 *   that namespace 64 characters wide for them): the same primary key decides that an alias and a code are
 *   unique together per domain, and the same lookup answers a visit by either. A removed alias stays as a
 *   tombstone (retired_reason 'deleted', link_id kept), so it never points at another link.
 * - `links.aliases`: the link's live aliases, comma-separated in the order given (aliases are 0-9a-zA-Z_-),
 *   a copy for reading the record without a join, as `tags` is for link_tags. varchar(700): 10 × 64 + 9.
 * - `clicks.alias`: the alias a visit came through; null through the code.
 */
export async function up(db: Kysely<unknown>, _d: Dialect): Promise<void> {
  await db.schema
    .alterTable('links')
    .addColumn('aliases', 'varchar(700)', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.alterTable('clicks').addColumn('alias', 'varchar(64)').execute();
}
