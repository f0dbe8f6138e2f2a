import { sql, type RawBuilder } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { NARROW_AND, RARE_TRIGRAM, SHORT_SHARE, searchCandidates } from '../../../src/db/link-search.js';
import { engines, type TestApp } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';

const LINKS = NARROW_AND + 1_000;

/** searchCandidates of a needle, with `column`'s ilike as the list's condition. */
const candidatesIn = (t: Pick<TestApp, 'storage'>, column: string) => (needle: string) =>
  searchCandidates(t.storage.db, t.storage.dialect, needle, t.storage.dialect.containsIgnoringCase(column, needle));

/**
 * A `q` most links match (SPEC §13, §18): no index narrows it (SQLite: its trigrams are all common, and more than
 * NARROW_AND links hold them all; PostgreSQL: the planner, from the columns' statistics, expects most links to
 * match, and the ids are not collected first), the list meets its matches in its own order, and the page and the
 * total are the scan's, exactly.
 */
describe.each(engines)('a search most links match on %s', (engine) => {
  const t = useTestApp(engine);
  const u = useUser(t);

  beforeAll(async () => {
    // Straight into the database, as bench/lib/million-seed.ts does: the API would take a while for 21,000.
    await sql`with recursive s(i) as (select 1 union all select i + 1 from s where i < ${sql.lit(LINKS)})
      insert into links (domain_id, short_code, user_id, original_url, created_at, updated_at, title, aliases, tags)
      select 0, 'brd' || i, ${u.id}, 'https://broad.example/page/' || i, 1000 + i, 1000 + i, 'Page ' || i, '', ''
      from s`.execute(t.storage.db);
    if (engine === 'postgres') await sql`analyze links`.execute(t.storage.db); // what autovacuum does after it
  });

  const candidates = candidatesIn(t, 'links.original_url');

  it('when q is in every link, then no index narrows it, and the page and the total are every link', async () => {
    expect(await candidates('broad.example/page')).toBeNull();
    const res = await t.request({
      url: `/api/v1/users/${u.id}/links?q=BROAD.example&limit=5&order=desc`,
      token: u.token,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.pagination.total).toBe(LINKS);
    expect(res.body.data.map((l: { short_code: string }) => l.short_code)).toEqual(
      [0, 1, 2, 3, 4].map((k) => `brd${LINKS - k}`),
    );
  });

  it('when an admin lists with that q, then the total counted in parts on the scan threads is every match once', async () => {
    // SQLite cuts the count by id, one part a scan thread (link-queries.repository.ts, countOnScans); the other
    // user's links lie between, so the parts' bounds fall among links that match and links that do not.
    const other = await createUser(t);
    for (let k = 0; k < 3; k += 1) {
      const made = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: other.token,
        payload: { original_url: `https://elsewhere.example/${k}` },
      });
      expect(made.status, made.text).toBe(201);
    }
    const admin = await createUser(t, { role: 'admin' });
    const res = await t.request({ url: '/api/v1/links?q=BROAD.example&limit=3', token: admin.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.pagination.total).toBe(LINKS);
    const odd = await t.request({ url: `/api/v1/users/${u.id}/links?q=/page/1&limit=1`, token: u.token });
    expect(odd.status, odd.text).toBe(200);
    // 1, 10–19, 100–199, … : the matches crowd the low ids, so one part holds most of them
    const expected = Array.from({ length: LINKS }, (_, i) => String(i + 1)).filter((n) => n.startsWith('1')).length;
    expect(odd.body.pagination.total).toBe(expected);
  });

  it('when q is in one link of them, then the index narrows it and finds that one', async () => {
    expect(await candidates('broad.example/page/4242')).not.toBeNull();
    const res = await t.request({ url: `/api/v1/users/${u.id}/links?q=page/4242`, token: u.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.pagination.total).toBe(1);
    expect(res.body.data[0].short_code).toBe('brd4242');
  });
});

/**
 * At ten million links a title word has every trigram in tens of thousands of links (bench:scale): none is rare,
 * but few links hold them all, and that AND narrows the search (SQLite) where the scan took seconds.
 */
describe.each(engines)('a search whose trigrams are each common on %s', (engine) => {
  const t = useTestApp(engine);
  const u = useUser(t);
  const BOTH = RARE_TRIGRAM + 4; // 'xyzx zxy': all three trigrams of 'xyzxyz', never the word

  beforeAll(async () => {
    const insert = (from: number, to: number, title: RawBuilder<string>) =>
      sql`with recursive s(i) as (select ${sql.lit(from)} union all select i + 1 from s where i < ${sql.lit(to)})
        insert into links (domain_id, short_code, user_id, original_url, created_at, updated_at, title, aliases, tags)
        select 0, 'nar' || i, ${u.id}, 'https://n.example/' || i, 1000 + i, 1000 + i, ${title}, '', '' from s`.execute(
        t.storage.db,
      );
    await insert(1, BOTH, sql`'xyzx zxy ' || i`);
    await insert(BOTH + 1, 2 * BOTH, sql`'xyzx ' || i`);
    await insert(2 * BOTH + 1, 2 * BOTH + 3, sql`'the xyzxyz ' || i`);
    if (engine === 'postgres') await sql`analyze links`.execute(t.storage.db);
  });

  it('when few links hold all of them, then their AND narrows it, and the answer is the scan’s', async () => {
    const matches = t.storage.dialect.containsIgnoringCase('links.title', 'xyzxyz');
    expect(await searchCandidates(t.storage.db, t.storage.dialect, 'xyzxyz', matches)).not.toBeNull();
    const res = await t.request({ url: `/api/v1/users/${u.id}/links?q=XYZxyz&order=desc`, token: u.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.pagination.total).toBe(3);
    expect(res.body.data.map((l: { short_code: string }) => l.short_code)).toEqual(
      [3, 2, 1].map((k) => `nar${2 * BOTH + k}`),
    );
  });
});

/**
 * Two characters more than RARE_TRIGRAM links hold (SQLite): the index looks them up while they are in at most
 * SHORT_SHARE of the links, where the scan would read every link to count them (bench:million's `AF`, in 2 % of a
 * million codes: 250 ms scanned); past that share the scan answers. Either way the page, the total and a cursor
 * walk are the scan's.
 */
describe.each(engines)('a search of two characters many links hold on %s', (engine) => {
  const t = useTestApp(engine);
  const u = useUser(t);
  const COUNT = 40_000;
  const SOME = 7; // every 7th link's title holds `qj`: 5,714 links, more than RARE_TRIGRAM, 14 % of them
  const MANY = 3; // every 3rd holds `wk`: 33 %

  beforeAll(async () => {
    await sql`with recursive s(i) as (select 1 union all select i + 1 from s where i < ${sql.lit(COUNT)})
      insert into links (domain_id, short_code, user_id, original_url, created_at, updated_at, title, aliases, tags)
      select 0, 'sp' || i, ${u.id}, 'https://s.example/' || i, 1000 + i, 1000 + i,
        'Item ' || case when i % ${sql.lit(SOME)} = 0 then 'qjx ' else '' end
          || case when i % ${sql.lit(MANY)} = 0 then 'wkx ' else '' end || i, '', ''
      from s`.execute(t.storage.db);
    if (engine === 'postgres') await sql`analyze links`.execute(t.storage.db);
  });

  const holding = (every: number) =>
    Array.from({ length: Math.floor(COUNT / every) }, (_, k) => `sp${(k + 1) * every}`).reverse();
  const candidates = candidatesIn(t, 'links.title');

  it.each([
    ['QJ', SOME],
    ['wK', MANY],
  ])(
    'when q is %s, then the total, the first page and a cursor walk are the links holding it',
    async (needle, every) => {
      const expected = holding(every);
      expect(expected.length).toBeGreaterThan(RARE_TRIGRAM);
      if (engine === 'sqlite') {
        // The rule itself: looked up below SHORT_SHARE of the links, scanned above it.
        const share = expected.length / COUNT;
        expect(share < SHORT_SHARE).toBe(every === SOME);
        expect((await candidates(needle)) !== null).toBe(share < SHORT_SHARE);
      }
      const res = await t.request({
        url: `/api/v1/users/${u.id}/links?q=${needle}&order=desc&limit=100`,
        token: u.token,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.pagination.total).toBe(expected.length);
      expect(res.body.data.map((l: { short_code: string }) => l.short_code)).toEqual(expected.slice(0, 100));
      const walked: string[] = [];
      let cursor: string | null = res.body.pagination.nextCursor;
      walked.push(...res.body.data.map((l: { short_code: string }) => l.short_code));
      for (let pages = 0; pages < 3 && cursor; pages += 1) {
        const next = await t.request({
          url: `/api/v1/users/${u.id}/links?q=${needle}&order=desc&limit=100&cursor=${encodeURIComponent(cursor)}`,
          token: u.token,
        });
        expect(next.status, next.text).toBe(200);
        walked.push(...next.body.data.map((l: { short_code: string }) => l.short_code));
        cursor = next.body.pagination.nextCursor;
      }
      expect(walked).toEqual(expected.slice(0, 400));
    },
  );
});
