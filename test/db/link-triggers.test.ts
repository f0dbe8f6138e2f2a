import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Storage } from '../../src/db/database.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrator.js';
import { freshPostgresStorages } from '../helpers/app.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * Migration 060, PostgreSQL: the statement-level triggers of `links` plan each statement for the transition tables
 * of the call that runs it, and without JIT compilation (db/statement-triggers.ts). The functions are found from
 * the catalogue, so a trigger added later without them fails here.
 */
describe.runIf(missing.postgres === null)(unless(missing.postgres, 'the statement triggers of links'), () => {
  const open = freshPostgresStorages();

  /** Each statement-level trigger function of `links`: its `jit` (null: the session's), whether it plans per call. */
  const triggerFunctions = async (s: Storage) =>
    (
      await sql<{ fn: string; jit: string | null; planned: boolean }>`select distinct p.proname as fn,
        (select substr(c, 5) from unnest(p.proconfig) c where c like 'jit=%') as jit,
        p.prosrc like '%execute $run$%' as planned
        from pg_trigger t join pg_proc p on p.oid = t.tgfoid
        where t.tgrelid = 'links'::regclass and not t.tgisinternal and t.tgtype & 1 = 0
        order by p.proname`.execute(s.db)
    ).rows;

  it('when a database is made, then every statement-level trigger of links plans per call without JIT', async () => {
    const { storage: s } = await open();
    await migrateToLatest(s.db as unknown as Kysely<unknown>, s.dialect);
    const fns = await triggerFunctions(s);
    expect(fns.map((f) => f.fn)).toEqual(
      expect.arrayContaining(['link_click_order_apply', 'link_owner_totals_apply', 'link_search_text_apply']),
    );
    expect(fns.filter((f) => f.jit !== 'off' || !f.planned)).toEqual([]);
  });

  it('when a database whose triggers plan once, with JIT, is upgraded, then they plan per call without', async () => {
    const { storage: s } = await open();
    await migrateUpTo(s.db as unknown as Kysely<unknown>, s.dialect, '059-link-search-text');
    // As a release before 060 made them: the statements written in the body, and the session's `jit`.
    for (const { fn } of await triggerFunctions(s)) {
      const { rows } = await sql<{ src: string }>`select prosrc as src from pg_proc where proname = ${fn}`.execute(
        s.db,
      );
      const written = rows[0]!.src.replaceAll('execute $run$', '').replaceAll('$run$', '');
      await sql
        .raw(`create or replace function ${fn}() returns trigger language plpgsql as $old$${written}$old$`)
        .execute(s.db);
    }
    expect((await triggerFunctions(s)).filter((f) => f.jit !== null || f.planned)).toEqual([]);
    await migrateToLatest(s.db as unknown as Kysely<unknown>, s.dialect);
    const fns = await triggerFunctions(s);
    expect(fns.length).toBeGreaterThanOrEqual(4);
    expect(fns.filter((f) => f.jit !== 'off' || !f.planned)).toEqual([]);
  });

  /**
   * The plans of the statements the triggers run, as auto_explain gives them to the session (as notices): one
   * connection's first update of links is one row, its second 400 (a click batch after a PATCH). Planned once
   * and kept, the second call's statements were planned for tables of one row (nested loops over them: 153 s of
   * a batch of 1,000 at a million links, seconds here); each must expect the 400 rows it is given.
   */
  it('when one connection updates one link and then 400, then the second call plans for 400 rows', async () => {
    const { storage: s, url } = await open();
    await migrateToLatest(s.db as unknown as Kysely<unknown>, s.dialect);
    const now = Date.now();
    await sql`insert into users (username, username_lower, email, email_lower, password_hash, role, status,
      version, created_at, updated_at) values ('owner', 'owner', 'owner@example.com', 'owner@example.com', 'x',
      'user', 'active', 1, ${now}, ${now})`.execute(s.db);
    await sql`insert into links (short_code, original_url, user_id, tags, created_at, updated_at)
      select 'c' || i, 'https://example.com/' || i, (select id from users), 'a,b', ${now}, ${now}
      from generate_series(1, 400) i`.execute(s.db);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const notices: string[] = [];
    client.on('notice', (n) => notices.push(`${n.message ?? ''}\n${n.where ?? ''}`)); // the plan, and its function
    try {
      for (const statement of [
        "load 'auto_explain'",
        'set auto_explain.log_min_duration = 0',
        'set auto_explain.log_nested_statements = on',
        "set auto_explain.log_level = 'notice'",
        "set client_min_messages = 'notice'",
      ])
        await client.query(statement);
      await client.query(`update links set title = 'One', updated_at = updated_at + 1 where short_code = 'c1'`);
      notices.length = 0;
      // A click batch: counters and click times of every link (which moves no total's click time inwards).
      await client.query(`update links set click_count = click_count + 1, last_click_at = ${now}`);
      const plans = notices.filter((n) => /Named Tuplestore Scan/.test(n));
      // One at least from each trigger whose update branch reads its transition tables.
      for (const fn of ['owner_totals', 'owner_tags', 'click_order', 'search_text'])
        expect(
          plans.some((p) => p.includes(`function link_${fn}_apply()`)),
          fn,
        ).toBe(true);
      const estimates = plans.flatMap((p) =>
        [...p.matchAll(/Named Tuplestore Scan[^(]*\(cost=[\d.]+ rows=(\d+)/g)].map((m) => Number(m[1])),
      );
      expect(estimates.length).toBeGreaterThanOrEqual(8);
      // 400 rows each, fewer where a filter is estimated (e.g. an owner not null): never the first call's one.
      expect(estimates.filter((rows) => rows < 200)).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
