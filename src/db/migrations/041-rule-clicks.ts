import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * What routed a visit is recorded (SPEC §21): the routing rule that chose the URL and the A/B variant.
 *
 * - `clicks.rule_id`, `clicks.variant_id`: the ids as the link's rules name them (short strings Ferry assigns),
 *   null when none chose (the link's original_url) and for every record made before.
 * - `link_click_daily_choices`: per link, UTC day, kind (`rule` or `variant`), id and human visitor, the human
 *   clicks. A link's statistics read `by_rule` and `by_variant` from it: the window's clicks are the sum, its
 *   unique visitors the distinct visitors of its days (a visitor is the address, or with IP_ANONYMIZE its daily
 *   hash; '' for a click without one, which counts as a click and as no visitor). Only clicks a rule or a variant
 *   routed have rows, and bots none, so links without rules write nothing here. Clustered by its key on SQLite,
 *   like the other rollups, which the window's read follows (link, then days).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema.alterTable('clicks').addColumn('rule_id', 'text').execute();
  await db.schema.alterTable('clicks').addColumn('variant_id', 'text').execute();
  await d
    .clusteredByPrimaryKey(db.schema.createTable('link_click_daily_choices'))
    .addColumn('link_id', d.bigint, (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addColumn('day_start', d.bigint, (c) => c.notNull())
    .addColumn('kind', 'varchar(8)', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('visitor', 'varchar(64)', (c) => c.notNull())
    .addColumn('clicks', d.bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('link_click_daily_choices_pk', ['link_id', 'day_start', 'kind', 'value', 'visitor'])
    .execute();
}
