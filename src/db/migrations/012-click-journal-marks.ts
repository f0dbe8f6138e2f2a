import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The click journal's marks (modules/clicks/transport/click-journal.ts): per journal (one per process on the embedded
 * engine), how many of its clicks are committed, moved in the transaction that commits them. The start-up
 * replays only what is past the mark, then forgets the marks. It replaces a unique key per journaled click.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .createTable('click_journal_marks')
    .addColumn('journal', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('committed', d.bigint, (c) => c.notNull())
    .execute();
}
