import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { searchCandidates } from '../../../src/db/link-search.js';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createLink, patchLink, type CreatedLink } from './links.helpers.js';

/**
 * `q` through the search index (migration 039, db/link-search.ts) answers what the scan answered: a substring of
 * the title, the code, an alias or the URL, ignoring ASCII case, `%` `_` and quotes matching themselves, patterns
 * of one or two characters (the scan; on SQLite two through the trigrams they begin) as well as longer ones, and
 * the index follows every change.
 */
describe.each(engines)('link search (q) on %s', (engine) => {
  const t = useTestApp(engine);
  const u = useUser(t);
  const admin = useUser(t, { role: 'admin' });
  const specs = [
    {
      original_url: 'https://shop.example/100%_off?ref=news',
      title: 'Spring "Sale" 50% off',
      aliases: ['spring-sale-2026'],
    },
    { original_url: 'https://blog.example/posts/o_O', title: "Rock 'n' roll notes" },
    {
      original_url: 'https://docs.example/Guide/Windows',
      title: 'C:\\Guide\\Windows',
      aliases: ['old_Slug', 'another-one'],
    },
    { original_url: 'https://example.org/xyzzy', title: null },
  ];
  let links: Array<CreatedLink & { title: string | null; aliases: string[] }> = [];
  beforeAll(async () => {
    links = [];
    for (const spec of specs) {
      const link = await createLink(t, spec, u.token);
      links.push({ ...link, title: spec.title ?? null, aliases: spec.aliases ?? [] });
      t.clock.advance(1000);
    }
  });

  const search = async (q: string, version = 1): Promise<string[]> => {
    const res = await t.request({
      url: `/api/v${version}/users/${u.id}/links?limit=100&q=${encodeURIComponent(q)}`,
      token: u.token,
    });
    expect(res.status, res.text).toBe(200);
    return (res.body.data as Array<{ short_code?: string; shortCode?: string }>).map(
      (l) => (l.short_code ?? l.shortCode)!,
    );
  };
  /** What the scan answers, computed here: every text is ASCII, so lower-casing is ASCII case folding. */
  const expected = (q: string): string[] => {
    const n = q.toLowerCase();
    const has = (text: string | null) => text !== null && text.toLowerCase().includes(n);
    return links
      .filter(
        (l) =>
          has(l.original_url) || has(l.short_code) || has(l.title) || (!q.includes(',') && has(l.aliases.join(','))),
      )
      .map((l) => l.short_code);
  };

  it('when q is a substring of a title, a code, an alias or a URL in any ASCII case, then exactly the links the scan finds', async () => {
    const needles = [
      'spring',
      'SALE',
      '"sale"',
      "'n'",
      'roll NOTES',
      'SHOP.EXAMPLE/100',
      'spring-sale-2026',
      'OLD_slug',
      'another-one',
      'guide\\win',
      'xyzzy',
      specs[0]!.original_url.toUpperCase(),
      `${specs[0]!.original_url}#`,
      links[1]!.short_code.toUpperCase(),
      links[2]!.short_code.slice(1, 5),
      'nothing-like-it',
      'example',
    ];
    for (const q of needles) expect(await search(q), q).toEqual(expected(q));
  });

  it('when q has one or two characters (the scan, or on SQLite the trigrams two begin), then the same answers', async () => {
    for (const q of ['%', '_', '%_', 'o_', 'O', 'x', 'zz', '"', "'", '\\', '/', links[3]!.short_code.slice(0, 2)]) {
      expect(await search(q), q).toEqual(expected(q));
    }
  });

  it("when q's two characters end a title, a code, an alias or a URL, in any ASCII case, then those links are found", async () => {
    // The last two characters of a column begin no trigram of its own text: the index's char(1) after each does.
    const ends = ['ES', 'ws', 'NE', 'zy', 'Gg', 'qJ', ...links.map((l) => l.short_code.slice(-2).toUpperCase())];
    for (const q of ends) {
      const found = await search(q);
      expect(found, q).toEqual(expected(q));
      if (!['Gg', 'qJ'].includes(q)) expect(found.length, q).toBeGreaterThan(0);
    }
  });

  it("when q holds LIKE's or the index's own syntax (% _ quotes, AND, *, column:), then they match themselves", async () => {
    for (const q of [
      '100%_off',
      '50% off',
      '%_o',
      '"Sale" 50',
      'o_O',
      'sale AND notes',
      'spr*',
      'title:spring',
      'NEAR(a b)',
      "n' roll",
      '""',
    ]) {
      expect(await search(q), q).toEqual(expected(q));
    }
  });

  it('when q holds characters beyond ASCII, then they match themselves (the index folds their case, the LIKE decides)', async () => {
    const link = await createLink(t, { original_url: 'https://example.net/ete', title: 'Été à Paris' }, u.token);
    expect(await search('té à')).toEqual([link.short_code]);
    expect(await search('Été à PARIS')).toEqual([link.short_code]);
    // SQLite's LIKE folds ASCII only, as the scan did; the index, which folds É to é, must not widen that.
    if (engine === 'sqlite') expect(await search('été à')).toEqual([]);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: u.token })).status,
    ).toBe(204);
  });

  it('when a comma joins two aliases, then q does not match across them (the scan skipped the aliases for it)', async () => {
    expect(await search('old_Slug,another')).toEqual([]);
    expect(await search('Slug,an')).toEqual([]);
  });

  it('when a link is renamed, aliased, moved to another URL or deleted, then q follows at once', async () => {
    const link = await createLink(
      t,
      { original_url: 'https://before.example/page', title: 'Quarterly figures' },
      u.token,
    );
    expect(await search('quarterly')).toEqual([link.short_code]);
    expect(
      (
        await patchLink(
          t,
          link.short_code,
          { title: 'Annual figures', original_url: 'https://after.example/page', aliases: ['fresh-alias'] },
          { token: u.token },
        )
      ).status,
    ).toBe(200);
    expect(await search('quarterly')).toEqual([]);
    expect(await search('before.example')).toEqual([]);
    expect(await search('ANNUAL fig')).toEqual([link.short_code]);
    expect(await search('after.example')).toEqual([link.short_code]);
    expect(await search('fresh-alias', 2)).toEqual([link.short_code]);
    expect((await patchLink(t, link.short_code, { aliases: null }, { token: u.token })).status).toBe(200);
    expect(await search('fresh-alias')).toEqual([]);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: u.token })).status,
    ).toBe(204);
    expect(await search('annual fig')).toEqual([]);
  });

  it('when links come in through the bulk endpoint, then they are found like the others', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links/bulk',
      token: u.token,
      payload: {
        links: [
          { original_url: 'https://bulk.example/one', title: 'Bulk zebra' },
          { original_url: 'https://bulk.example/two' },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect((await search('bulk zebra')).length).toBe(1);
    expect((await search('BULK.example')).length).toBe(2);
  });

  it('when the admin searches every link, then the same answers as the owner sees', async () => {
    for (const q of ['spring-sale', 'SHOP', 'o_']) {
      const res = await t.request({
        url: `/api/v1/links?user_id=${u.id}&limit=100&q=${encodeURIComponent(q)}`,
        token: admin.token,
      });
      expect(res.status, res.text).toBe(200);
      expect(
        res.body.data.map((l: { short_code: string }) => l.short_code),
        q,
      ).toEqual(expected(q));
    }
  });

  it('when q has two characters, then on PostgreSQL the plan reads the pairs index, and its candidates hold every match', async () => {
    if (engine !== 'postgres') return; // SQLite: the next test
    const link = await createLink(t, { original_url: 'https://example.net/ete', title: 'Été à Paris' }, u.token);
    const db = t.storage.db;
    const candidates = async (needle: string) => {
      const where = await searchCandidates(db, t.storage.dialect, needle, sql`1 = 1`);
      expect(where, needle).not.toBeNull();
      return where!;
    };
    const plan = await db.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      return sql<{ 'QUERY PLAN': string }>`explain select id from links where ${await candidates('ws')}`.execute(tx);
    });
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/links_search_pairs_idx/);
    // What the scan finds (the four ilikes alone) must be among the candidates, beyond ASCII and across columns too.
    const rows = async (where: RawBuilder<SqlBool>) =>
      (
        await sql<{ id: number; short_code: string; user_id: number | null }>`select id, short_code, user_id
          from links where ${where} order by id`.execute(db)
      ).rows;
    const ids = async (where: RawBuilder<SqlBool>) => (await rows(where)).map((r) => Number(r.id));
    const columns = ['links.title', 'links.short_code', 'links.aliases', 'links.original_url'];
    for (const needle of [
      'ws',
      'WS',
      'ét',
      'ÉT',
      'à ',
      ' p',
      'IS',
      'zy',
      '%_',
      '_o',
      "'n",
      link.short_code.slice(-2),
    ]) {
      const scan = sql<SqlBool>`(${sql.join(
        columns.map((c) => t.storage.dialect.containsIgnoringCase(c, needle)),
        sql` or `,
      )})`;
      const found = await rows(scan);
      const narrowed = await ids(await candidates(needle));
      for (const r of found) expect(narrowed, needle).toContain(Number(r.id));
      const theirs = found.filter((r) => Number(r.user_id) === u.id).map((r) => r.short_code);
      expect((await search(needle)).sort(), needle).toEqual(theirs.sort());
    }
    expect(await ids(await candidates('q~'))).toEqual([]);
    // One character has no pair: the scan.
    expect(await searchCandidates(db, t.storage.dialect, 'w', sql`1 = 1`)).toBeNull();
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: u.token })).status,
    ).toBe(204);
  });

  it('when q has two ASCII characters, then on SQLite the plan reads the index (no link at all for none)', async () => {
    // '~' is in no text here, nor in a random code (alphanumeric): two letters could be, in one run of a hundred.
    if (engine !== 'sqlite') return; // PostgreSQL: the test before
    const planOf = async (needle: string) => {
      const where = await searchCandidates(t.storage.db, t.storage.dialect, needle, sql`1 = 1`);
      expect(where, needle).not.toBeNull();
      const plan = await sql<{ detail: string }>`explain query plan select id from links where ${where!}`.execute(
        t.storage.db,
      );
      return plan.rows.map((r) => r.detail).join('\n');
    };
    expect(await planOf('ws')).toMatch(/VIRTUAL TABLE INDEX/);
    expect(await planOf('ws')).not.toMatch(/SCAN links/);
    const none = await sql<{ n: number }>`select count(*) as n from links where ${(await searchCandidates(
      t.storage.db,
      t.storage.dialect,
      'q~',
      sql`1 = 1`,
    ))!}`.execute(t.storage.db);
    expect(Number(none.rows[0]!.n)).toBe(0);
    // Beyond ASCII the tokenizer's case folding is not JavaScript's: the scan answers.
    expect(await searchCandidates(t.storage.db, t.storage.dialect, 'té', sql`1 = 1`)).toBeNull();
  });

  it('when q has three characters or more, then the plan reads the index, not every link', async () => {
    if (engine === 'sqlite') {
      const where = await searchCandidates(t.storage.db, t.storage.dialect, 'spring', sql`1 = 1`);
      const plan = await sql<{ detail: string }>`explain query plan select id from links where ${where!}`.execute(
        t.storage.db,
      );
      expect(plan.rows.map((r) => r.detail).join('\n')).toMatch(/VIRTUAL TABLE INDEX/);
      expect(plan.rows.map((r) => r.detail).join('\n')).not.toMatch(/SCAN links/);
    } else {
      const plan = await t.storage.db.transaction().execute(async (tx) => {
        await sql`set local enable_seqscan = off`.execute(tx);
        return sql<{
          'QUERY PLAN': string;
        }>`explain select id from links where original_url ilike '%spring%' or title ilike '%spring%'`.execute(tx);
      });
      const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/links_original_url_trgm/);
      expect(text).toMatch(/links_title_trgm/);
    }
  });
});
