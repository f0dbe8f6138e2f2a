import type { Kysely } from 'kysely';

/**
 * No change to the schema: from this migration on, the embedded click writer may store a `link.clicked` event's
 * payload in its compact form (db/click-event-payload.ts) instead of the whole envelope, which only builds that
 * can expand it read. A build before this one finds this migration applied and unknown to it, and refuses to
 * start on the database (Kysely's migrator: a migration that ran is missing) instead of sending broken events.
 */
export async function up(_db: Kysely<unknown>): Promise<void> {
  // the marker is the migration's row itself
}
