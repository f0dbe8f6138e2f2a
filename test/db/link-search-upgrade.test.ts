import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createStorage, type Storage } from '../../src/db/database.js';
import { searchCandidates } from '../../src/db/link-search.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrator.js';
import { freshPostgresStorages } from '../helpers/app.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * Migration 055 on SQLite: an instance whose search index was built before it (each column's text alone, so the
 * two characters ending a column began no trigram) gets the index anew, and a two-character `q` finds the links
 * it ends as well as the links written after the upgrade.
 */
describe('the search index of an earlier release (SQLite)', () => {
  let dir: string | null = null;
  let storage: Storage | null = null;
  afterEach(async () => {
    await storage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    [dir, storage] = [null, null];
  });

  /**
   * The index as migration 039 built it before 055: each column's text alone, and no list of trigrams (its
   * update trigger left out: this test changes no link).
   */
  const buildEarlierIndex = async (s: Storage) => {
    const row = `new.id, coalesce(new.title, ''), new.short_code, new.aliases, new.original_url`;
    for (const statement of [
      'drop trigger links_search_insert',
      'drop trigger links_search_update',
      'drop table link_search_terms',
      'drop table link_search',
      `create virtual table link_search using fts5(title, short_code, aliases, original_url, content = '',
        contentless_delete = 1, tokenize = 'trigram', detail = none)`,
      `create trigger links_search_insert after insert on links begin
        insert into link_search (rowid, title, short_code, aliases, original_url) values (${row}); end`,
    ])
      await sql.raw(statement).execute(s.db);
  };

  const matching = async (s: Storage, needle: string): Promise<string[]> => {
    const where = await searchCandidates(s.db, s.dialect, needle, sql`1 = 1`);
    const rows = await sql<{
      short_code: string;
    }>`select short_code from links where ${where ?? sql`1 = 0`} order by id`.execute(s.db);
    return rows.rows.map((r) => r.short_code);
  };

  it('when it is upgraded, then two characters ending a column are found, in the old links and the new', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-search-upgrade-'));
    storage = createStorage({ databaseUrl: null, dataDir: dir, dbPoolMax: 1 });
    await migrateUpTo(storage.db as unknown as Kysely<unknown>, storage.dialect, '054-webhook-pending-index');
    await buildEarlierIndex(storage);
    const now = Date.now();
    await sql`insert into links (short_code, original_url, created_at, updated_at, title) values
      ('oldone', 'https://example.com/page-qx', ${now}, ${now}, 'Notes of May')`.execute(storage.db);
    // The earlier index: "qx" ends the URL, no trigram begins with it; and no list of trigrams to look in.
    await expect(matching(storage, 'qx')).rejects.toThrow(/link_search_terms/);

    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
    await sql`insert into links (short_code, original_url, created_at, updated_at, title) values
      ('newone', 'https://example.com/other-qx', ${now}, ${now}, 'Plans of June')`.execute(storage.db);
    expect(await matching(storage, 'qx')).toEqual(['oldone', 'newone']);
    expect(await matching(storage, 'AY')).toEqual(['oldone']);
    expect(await matching(storage, 'ne')).toEqual(['oldone', 'newone']);
    expect(await matching(storage, 'zv')).toEqual([]);
  });
});

/**
 * Migration 057 on PostgreSQL: the links an instance already has get their pairs of characters indexed, so a
 * two-character `q` finds them through the index, as it finds the links written after the upgrade.
 */
describe.runIf(missing.postgres === null)(unless(missing.postgres, 'the pairs index of an upgrade on postgres'), () => {
  const open = freshPostgresStorages();

  it('when it is upgraded, then two characters are found in the old links and the new', async () => {
    const { storage } = await open();
    await migrateUpTo(storage.db as unknown as Kysely<unknown>, storage.dialect, '056-link-click-order');
    const now = Date.now();
    await sql`insert into links (short_code, original_url, created_at, updated_at, title) values
      ('oldone', 'https://example.com/page-qx', ${now}, ${now}, 'Notes of May')`.execute(storage.db);
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
    await sql`insert into links (short_code, original_url, created_at, updated_at, title) values
      ('newone', 'https://example.com/other-qx', ${now}, ${now}, 'Plans of June')`.execute(storage.db);
    const matching = async (needle: string) => {
      const where = await searchCandidates(storage.db, storage.dialect, needle, sql`1 = 1`);
      expect(String(where?.compile(storage.db).sql), needle).toMatch(/link_search_pairs/);
      const rows = await sql<{ short_code: string }>`select short_code from links where ${where!} order by id`.execute(
        storage.db,
      );
      return rows.rows.map((r) => r.short_code);
    };
    expect(await matching('qx')).toEqual(['oldone', 'newone']);
    expect(await matching('AY')).toEqual(['oldone']);
    expect(await matching('ne')).toEqual(['oldone', 'newone']);
    expect(await matching('zv')).toEqual([]);
  });
});
