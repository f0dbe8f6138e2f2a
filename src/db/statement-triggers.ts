import { sql, type Kysely } from 'kysely';

type LinksEvent = 'insert' | 'update' | 'delete';

/** A statement trigger of `links`: `links_<trigger>_<event>`, running `link_<trigger>_apply()` (plpgsql: `body`). */
export interface LinksTrigger {
  trigger: string;
  body: string;
  /** the writes it runs after: every insert, update and delete unless given */
  events?: readonly LinksEvent[];
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
 * PostgreSQL: `t`'s function (created or replaced first) as the statement-level trigger of every insert, update and
 * delete on `links` (or those of `t.events`), each seeing the statement's rows as transition tables (`new_links`,
 * `old_links`). Made again from scratch, so a later build may change it.
 */
export async function linksStatementTriggers(db: Kysely<unknown>, t: LinksTrigger): Promise<void> {
  const fn = `link_${t.trigger}_apply`;
  await sql
    .raw(`create or replace function ${fn}() returns trigger language plpgsql as $body$${t.body}$body$`)
    .execute(db);
  await noJit(db, fn);
  const transitions: Record<LinksEvent, string> = {
    insert: 'new table as new_links',
    update: 'old table as old_links new table as new_links',
    delete: 'old table as old_links',
  };
  for (const event of t.events ?? (['insert', 'update', 'delete'] as const)) {
    const referencing = transitions[event];
    await sql.raw(`drop trigger if exists links_${t.trigger}_${event} on links`).execute(db);
    await sql
      .raw(
        `create trigger links_${t.trigger}_${event} after ${event} on links referencing ${referencing}
        for each statement execute function ${fn}()`,
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
