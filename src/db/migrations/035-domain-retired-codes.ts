import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Codes retired on a domain outlive the domain (SPEC §25 "Small holes"): `link_codes` keys a domain's codes by
 * its id, and a domain deleted and added again (by anyone) gets a new id, so its old short URLs could have been
 * handed out anew. When a domain is deleted, every code it issued (its tombstones, and the codes of the links a
 * forced delete takes) is kept here by host name; a new claim of the name starts with them as tombstones.
 *
 * - `scope`: 0 when the domain was verified (its codes served visits: they bind every later claim); a user's
 *   id when it was that user's unverified claim (they bind that user's later claims only, so a claim that never
 *   served a visit cannot fill the name's namespace for its real owner).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .createTable('retired_domain_codes')
    .addColumn('hostname', 'varchar(253)', (c) => c.notNull())
    .addColumn('scope', d.bigint, (c) => c.notNull())
    .addColumn('code', 'varchar(64)', (c) => c.notNull())
    .addColumn('link_id', d.bigint)
    .addColumn('retired_at', d.bigint, (c) => c.notNull())
    .addColumn('retired_reason', 'varchar(16)', (c) => c.notNull())
    .addPrimaryKeyConstraint('retired_domain_codes_pkey', ['hostname', 'scope', 'code'])
    .execute();
}
