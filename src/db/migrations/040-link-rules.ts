import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * A link's routing rules (SPEC §21): the list as JSON text, exactly as GET /links/{code}/rules shows it (ids
 * assigned, modules/links/rules/). null: no rules, and the visit goes to `original_url` as before. One column
 * rather than tables of rules, conditions and variants: the list is always read, written and cached whole (the
 * redirect compiles it once into the cached link), never queried by its parts.
 */
export async function up(db: Kysely<unknown>, _d: Dialect): Promise<void> {
  await db.schema.alterTable('links').addColumn('rules', 'text').execute();
}
