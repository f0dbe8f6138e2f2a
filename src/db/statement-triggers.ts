import { sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: `fn` (its `create or replace function … returns trigger` text, applied first) as the statement-level
 * trigger of every insert, update and delete on `links`, each seeing the statement's rows as transition tables
 * (`new_links`, `old_links`), named `links_<name>_<event>`. Made again from scratch, so a later build may change it.
 */
export async function linksStatementTriggers(
  db: Kysely<unknown>,
  name: string,
  fn: { sql: string; name: string },
): Promise<void> {
  await sql.raw(fn.sql).execute(db);
  const transitions = {
    insert: 'new table as new_links',
    update: 'old table as old_links new table as new_links',
    delete: 'old table as old_links',
  };
  for (const [event, referencing] of Object.entries(transitions)) {
    await sql.raw(`drop trigger if exists links_${name}_${event} on links`).execute(db);
    await sql
      .raw(
        `create trigger links_${name}_${event} after ${event} on links referencing ${referencing}
        for each statement execute function ${fn.name}()`,
      )
      .execute(db);
  }
}
