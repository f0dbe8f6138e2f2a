import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { CLICK_ROW_TABLES } from '../../src/db/migrations/061-click-rows-unchecked.js';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import { createPgClickWriter } from '../../src/modules/clicks/rollups/pg-click-writer.js';
import { createTestApp, engines, type TestApp } from '../helpers/app.js';
import { createLink, createUser, HUMAN_UA, type CreatedLink } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';

/** `n` human clicks of `link`, each from its own address, routed by a rule and a variant (every rollup's rows). */
const clicksOf = (t: TestApp, link: CreatedLink, n: number): ClickEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    linkId: link.id,
    shortCode: link.short_code,
    clickedAt: t.clock.now() + i,
    ip: `10.7.${link.id % 250}.${i}`,
    userAgent: HUMAN_UA,
    referrer: 'https://news.example.org/item',
    ruleId: 'rule_1',
    variantId: 'var_1',
  }));

/** Rows per table of CLICK_ROW_TABLES held for `link`. */
async function rowsOf(t: TestApp, link: { id: number }): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of CLICK_ROW_TABLES) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}
      where link_id = ${link.id}`.execute(t.storage.db);
    counts[table] = Number(rows[0]!.n);
  }
  return counts;
}

const none = Object.fromEntries(CLICK_ROW_TABLES.map((table) => [table, 0]));

/**
 * A deleted link's click records and rollups go with it (PostgreSQL: the trigger of migration 061, where the
 * foreign keys' cascade did it; SQLite: the cascade).
 */
describe.each(engines)('a deleted link’s clicks on %s', (engine) => {
  it('when a clicked link is deleted through the API, then its records and rollups go and the other link’s stay', async () => {
    const t = await createTestApp(engine);
    try {
      const owner = await createUser(t);
      const gone = await createLink(t, { original_url: 'https://example.com/gone' }, owner.token);
      const kept = await createLink(t, { original_url: 'https://example.com/kept' }, owner.token);
      await createPgClickWriter(t.storage).write([...clicksOf(t, gone, 4), ...clicksOf(t, kept, 3)]);
      const before = await rowsOf(t, kept);
      for (const table of CLICK_ROW_TABLES) {
        expect((await rowsOf(t, gone))[table], table).toBeGreaterThan(0);
        expect(before[table], table).toBeGreaterThan(0);
      }

      const res = await t.request({ method: 'DELETE', url: `/api/v1/links/${gone.short_code}`, token: owner.token });
      expect(res.status, res.text).toBe(204);
      expect(await rowsOf(t, gone)).toEqual(none);
      expect(await rowsOf(t, kept)).toEqual(before);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(missing.postgres !== null)(unless(missing.postgres, 'the click rows of a deleted link'), () => {
  it('when the click tables are made, then none has a foreign key to links, and a delete trigger stands instead', async () => {
    const t = await createTestApp('postgres');
    try {
      const { rows: keys } = await sql<{ table: string }>`select conrelid::regclass::text as table from pg_constraint
        where contype = 'f' and confrelid = 'links'::regclass`.execute(t.storage.db);
      const checked = keys.map((k) => k.table);
      expect(checked).toContain('link_tags'); // the query finds the keys that remain
      for (const table of CLICK_ROW_TABLES) expect(checked.filter((c) => c.startsWith(table))).toEqual([]);
      const { rows: triggers } = await sql<{ tgname: string }>`select tgname from pg_trigger
        where tgrelid = 'links'::regclass and tgname like 'links_click_rows_%'`.execute(t.storage.db);
      expect(triggers.map((r) => r.tgname)).toEqual(['links_click_rows_delete']);
    } finally {
      await t.close();
    }
  });

  it('when click batches race the deletes of their links, then no row of a deleted link is left', async () => {
    const t = await createTestApp('postgres');
    try {
      const writer = createPgClickWriter(t.storage);
      const links = await Promise.all(
        Array.from({ length: 12 }, (_, i) => createLink(t, { original_url: `https://example.com/race/${i}` })),
      );
      const survivor = await createLink(t, { original_url: 'https://example.com/race/survivor' });
      // Each batch clicks the survivor too, so that every batch writes whichever way its race goes; every other
      // pair sends its delete first.
      await Promise.all(
        links.map(async (link, i) => {
          const write = () => writer.write([...clicksOf(t, link, 5), ...clicksOf(t, survivor, 1)]);
          const remove = () => t.storage.db.deleteFrom('links').where('id', '=', link.id).execute();
          await (i % 2 === 0 ? Promise.all([write(), remove()]) : Promise.all([remove(), write()]));
        }),
      );
      for (const link of links) expect(await rowsOf(t, link)).toEqual(none);
      const { rows } = await sql<{
        n: string;
      }>`select count(*) as n from clicks where link_id = ${survivor.id}`.execute(t.storage.db);
      expect(Number(rows[0]!.n)).toBe(links.length);
    } finally {
      await t.close();
    }
  });
});
