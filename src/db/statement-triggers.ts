import { sql, type Kysely } from 'kysely';

/** A trigger function: its `create or replace function … returns trigger` text, and its name. */
export interface TriggerFunction {
  sql: string;
  name: string;
}

/**
 * `statement`, in a trigger function's body, planned each time it runs (plpgsql's EXECUTE) for the transition
 * tables it is given. A statement written in the body is planned once per connection, from the first call's
 * tables, and kept: a connection whose first update of links was one row (a PATCH) kept nested loops over the
 * transition tables, and a click batch of 1,000 links on it then compared them pair by pair (at a million links,
 * link_owner_tags' join took 153 s of one batch). Migration 060.
 */
export const planned = (statement: string): string => `execute $run$${statement}$run$`;

/**
 * PostgreSQL: `fn` (its `create or replace function … returns trigger` text, applied first) as the statement-level
 * trigger of every insert, update and delete on `links`, each seeing the statement's rows as transition tables
 * (`new_links`, `old_links`), named `links_<name>_<event>`. Made again from scratch, so a later build may change it.
 */
export async function linksStatementTriggers(db: Kysely<unknown>, name: string, fn: TriggerFunction): Promise<void> {
  await sql.raw(fn.sql).execute(db);
  await noJit(db, fn.name);
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

/**
 * No JIT compilation of `fn`'s statements (migration 060). A trigger's statements are planned against all of
 * `links` while running over a statement's few rows: at a million links of one owner, link_owner_totals' repair
 * of click times moving inwards is planned with a scan of every link (never run: its join of the transition
 * tables comes first and is empty), whose estimated cost passes `jit_above_cost`, so every update of links (a
 * click batch's counters, a PATCH, a health check's result) compiled it: 13–95 ms a statement against 1–4 ms
 * without. `create or replace` clears a function's settings, so this follows every creation.
 */
export async function noJit(db: Kysely<unknown>, fn: string): Promise<void> {
  await sql.raw(`alter function ${fn}() set jit = off`).execute(db);
}
