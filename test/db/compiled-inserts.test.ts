import type { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { compiledInsert } from '../../src/db/compiled-inserts.js';
import type { Database } from '../../src/db/types.js';
import { createTestApp, engines, type TestApp } from '../helpers/app.js';

/**
 * The importer's multi-row inserts are compiled once per number of rows and run with the rows' values as
 * parameters (db/compiled-inserts.ts): what they write must be what the Kysely statement they stand for writes,
 * on both engines, and a statement whose parameters are not just its rows' values must be refused, not run.
 */
describe.each(engines)('compiled multi-row inserts on %s', (engine) => {
  let t: TestApp | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  const insertCodes = compiledInsert(
    ['domain_id', 'code', 'link_id'] as const,
    (db: Kysely<Database>, rows: Array<{ domain_id: number; code: string; link_id: number | null }>) =>
      db
        .insertInto('link_codes')
        .values(rows)
        .onConflict((oc) => oc.doNothing())
        .returning('code'),
  );

  it('when rows are inserted in chunks of different sizes, then each row is written with its own values and the conflicting ones come back missing', async () => {
    t = await createTestApp(engine);
    const db = t.storage.db;
    expect(
      await insertCodes(db, [
        { domain_id: 0, code: 'ab', link_id: null },
        { domain_id: 0, code: 'cd', link_id: null },
      ]),
    ).toEqual([{ code: 'ab' }, { code: 'cd' }]);
    // Three rows this time (another compiled text), one taken already, inside a transaction.
    const claimed = await db.transaction().execute((tx) =>
      insertCodes(tx, [
        { domain_id: 0, code: 'cd', link_id: null },
        { domain_id: 0, code: 'ef', link_id: null },
        { domain_id: 0, code: "g'h", link_id: null },
      ]),
    );
    expect(claimed.map((r) => r.code).sort()).toEqual(['ef', "g'h"]);
    expect(await insertCodes(db, [])).toEqual([]);
    const rows = await db
      .selectFrom('link_codes')
      .select(['domain_id', 'code', 'link_id', 'retired_at'])
      .where('code', 'in', ['ab', 'cd', 'ef', "g'h"])
      .orderBy('code')
      .execute();
    expect(rows.map((r) => [Number(r.domain_id), r.code, r.link_id, r.retired_at])).toEqual([
      [0, 'ab', null, null],
      [0, 'cd', null, null],
      [0, 'ef', null, null],
      [0, "g'h", null, null],
    ]);
  });

  it('when the statement has a parameter of its own, then it is refused before anything is written', async () => {
    t = await createTestApp(engine);
    const db = t.storage.db;
    const withConstant = compiledInsert(
      ['domain_id', 'code'] as const,
      (q: Kysely<Database>, rows: Array<{ domain_id: number; code: string }>) =>
        q.insertInto('link_codes').values(rows.map((r) => ({ ...r, retired_reason: 'deleted' as const }))),
    );
    await expect(withConstant(db, [{ domain_id: 0, code: 'zz' }])).rejects.toThrow(
      /not its rows' values in column order/,
    );
    const reordered = compiledInsert(
      ['code', 'domain_id'] as const,
      (q: Kysely<Database>, rows: Array<{ domain_id: number; code: string }>) =>
        q.insertInto('link_codes').values(rows.map((r) => ({ domain_id: r.domain_id, code: r.code }))),
    );
    await expect(reordered(db, [{ domain_id: 0, code: 'zz' }])).rejects.toThrow(/column order/);
    expect(await db.selectFrom('link_codes').select('code').where('code', '=', 'zz').execute()).toEqual([]);
  });
});
