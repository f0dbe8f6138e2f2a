import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { describe, expect, it } from 'vitest';
import { searchTextContains } from '../../src/db/link-search-text.js';
import { engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';

/**
 * The link lists' `q` is tested in two forms (db/dialect.ts): containsIgnoringCase, the `ilike` the search indexes
 * serve, and anyContainsIgnoringCase, the form tested on the rows a scan or the candidates' ids read (on
 * PostgreSQL literal `like`s first, then `lower(column) like lower(pattern)`). They must answer the same for every
 * needle: ASCII case either way, text beyond ASCII, the wildcards and the escape character taken literally, a
 * column whose collation is "C" (short_code), and a match in a second column only. On PostgreSQL a third form,
 * searchTextContains, tests the columns lowered and joined as link_search_text holds them (migration 059).
 */
const TEXTS: Array<[string, string]> = [
  ['https://Example.com/Path?a=1', 'AbC123'],
  ['https://example.com/été', 'xyz'],
  ['Été à Paris', 'ÉTÉ'],
  ['100% off_now', 'p\\q'],
  ['ÇA VA', 'a_b'],
  ['straße', 'STRASSE'],
  ['', 'only-in-second'],
];

const NEEDLES = [
  'example.COM',
  'EXAMPLE',
  'path?A=',
  'abc',
  'ABC1',
  'été',
  'ÉTÉ',
  'Été à',
  'ça',
  '%',
  '0% O',
  '_',
  'a_B',
  '\\',
  'P\\Q',
  'STRASSE',
  'straße',
  'STRAßE',
  'ONLY-in',
  'nothing here',
];

describe.each(engines)('a needle in any of several columns, ignoring case, on %s', (engine) => {
  const t = useTestApp(engine);

  /** The rows of TEXTS (their index) where `where` holds, `a` in the default collation and `b` in "C" on PostgreSQL. */
  async function matching(where: RawBuilder<SqlBool>): Promise<number[]> {
    const collated = engine === 'postgres' ? sql` collate "C"` : sql``;
    const texts = sql.join(
      TEXTS.map(
        ([a, b], i) => sql`select ${sql.lit(i)} as i, cast(${a} as text) as a, cast(${b} as text)${collated} as b`,
      ),
      sql` union all `,
    );
    const rows = await sql<{ i: number }>`select i from (${texts}) as t where ${where} order by i`.execute(
      t.storage.db,
    );
    return rows.rows.map((r) => Number(r.i));
  }

  it.skipIf(engine !== 'postgres')(
    'when a needle is tested in the columns lowered and joined, then the same rows match as by the indexed form',
    async () => {
      const { dialect } = t.storage;
      const joined = sql`(select lower(t.a) || chr(1) || lower(t.b) as text)`;
      let matched = 0;
      for (const needle of NEEDLES) {
        const indexed = sql<SqlBool>`(${dialect.containsIgnoringCase('t.a', needle)} or ${dialect.containsIgnoringCase('t.b', needle)})`;
        const expected = await matching(indexed);
        expect(
          await matching(
            sql<SqlBool>`exists (select from ${joined} as j where ${searchTextContains('j.text', needle)!})`,
          ),
          needle,
        ).toEqual(expected);
        matched += expected.length;
      }
      expect(matched).toBeGreaterThan(NEEDLES.length);
      // Two columns' ends never make a match, and a needle that could span them is not tested this way.
      expect(
        await matching(
          sql<SqlBool>`exists (select from ${joined} as j where ${searchTextContains('j.text', 'VAA_B')!})`,
        ),
      ).toEqual([]);
      expect(searchTextContains('j.text', 'a,b')).toBeNull();
      expect(searchTextContains('j.text', 'a\u0001b')).toBeNull();
    },
  );

  it('when a needle is tested as the rows are read, then the same rows match as by the indexed form', async () => {
    const { dialect } = t.storage;
    let matched = 0;
    for (const needle of NEEDLES) {
      const indexed = sql<SqlBool>`(${dialect.containsIgnoringCase('t.a', needle)} or ${dialect.containsIgnoringCase('t.b', needle)})`;
      const expected = await matching(indexed);
      expect(await matching(dialect.anyContainsIgnoringCase(['t.a', 't.b'], needle)), needle).toEqual(expected);
      matched += expected.length;
    }
    // The needles do find rows (a comparison of two empty lists proves nothing): by ASCII case, in the second
    // column, with literal wildcards.
    expect(matched).toBeGreaterThan(NEEDLES.length);
    expect(await matching(dialect.anyContainsIgnoringCase(['t.a', 't.b'], 'EXAMPLE'))).toEqual([0, 1]);
    expect(await matching(dialect.anyContainsIgnoringCase(['t.a', 't.b'], 'ONLY-in'))).toEqual([6]);
    expect(await matching(dialect.anyContainsIgnoringCase(['t.a', 't.b'], '0% O'))).toEqual([3]);
    expect(await matching(dialect.anyContainsIgnoringCase(['t.a', 't.b'], '_'))).toEqual([3, 4]);
    expect(await matching(dialect.anyContainsIgnoringCase(['t.a', 't.b'], 'P\\Q'))).toEqual([3]);
  });
});
