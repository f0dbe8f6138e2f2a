import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The click record keeps the domain the visit came in on (SPEC §19): `clicks.domain`, its host name, null for
 * the default domain. A name rather than an id, so that a record still says where the visit came from after
 * its link moved to another domain or the domain was deleted. Clicks recorded before this migration take the
 * domain their link is on when it runs: the closest that is known. varchar(253): the longest host name.
 */
export async function up(db: Kysely<unknown>, _d: Dialect): Promise<void> {
  await db.schema.alterTable('clicks').addColumn('domain', 'varchar(253)').execute();
  await sql`update clicks set domain = (select d.hostname from links l join domains d on d.id = l.domain_id where l.id = clicks.link_id)
    where link_id in (select id from links where domain_id <> 0)`.execute(db);
}
