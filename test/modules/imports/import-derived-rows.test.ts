import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { engines, type TestApp } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createLink, createUser } from '../../helpers/factories.js';
import { importCsv } from './imports.helpers.js';

/** Rows of a generic CSV file: more than a server's batch (100 links a transaction), so several transactions. */
const ROWS = 230;

const numbers = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k === 'tag' ? v : Number(v)]));

/** The owners' counters (migration 050) beside the same counted from the links themselves. */
async function countersAndCounts(t: TestApp) {
  const db = t.storage.db;
  const kept = await sql<Record<string, unknown>>`select user_id, domain_id, links, clicks, bots, unique_visitors
    from link_owner_totals where links <> 0 or clicks <> 0 order by user_id, domain_id`.execute(db);
  const keptTags = await sql<Record<string, unknown>>`select user_id, tag, domain_id, links from link_owner_tags
    where links <> 0 order by user_id, tag, domain_id`.execute(db);
  const counted = await sql<Record<string, unknown>>`select user_id, domain_id, count(*) as links,
    sum(click_count) as clicks, sum(bot_clicks) as bots, sum(unique_visitors) as unique_visitors from links
    where user_id is not null group by user_id, domain_id order by user_id, domain_id`.execute(db);
  const countedTags = await sql<Record<string, unknown>>`select l.user_id, lt.tag, l.domain_id, count(*) as links
    from link_tags lt join links l on l.id = lt.link_id where l.user_id is not null
    group by l.user_id, lt.tag, l.domain_id order by l.user_id, lt.tag, l.domain_id`.execute(db);
  return {
    kept: { totals: kept.rows.map(numbers), tags: keptTags.rows.map(numbers) },
    counted: { totals: counted.rows.map(numbers), tags: countedTags.rows.map(numbers) },
  };
}

/**
 * What the database derives from every link it holds (the search index behind `q`, the owners' link totals and
 * tag counts) must be exactly right after an import as after the API's own writes: an import writes its links
 * many to a statement (issue 37 item 5 measured what that costs).
 */
describe.each(engines)('rows derived from imported links on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a CSV of several batches has a refused and a conflicting row, then search finds every link and counters match', async () => {
    const admin = await createUser(t, { role: 'admin' });
    const owner = await createUser(t, { status: 'active' });
    // A code the owner has already: its row is a conflict, and its link is counted once.
    await createLink(
      t,
      { original_url: 'https://derived.example/before', short_code: 'drv5', tags: ['old'] },
      owner.token,
    );
    const lines = ['url,code,tags,title,aliases'];
    for (let i = 0; i < ROWS; i += 1) {
      const tags = ['spring', 'news', 'tech'].slice(0, i % 4).join('|');
      lines.push(
        `https://derived.example/item-${i}x?src=csv,drv${i},${tags},Title t${i}y,${i % 7 === 0 ? `old-name-${i}z` : ''}`,
      );
    }
    lines.push('https://derived.example/reserved,api,,,'); // a reserved code: refused
    const job = await importCsv(t, admin.token, `${lines.join('\r\n')}\r\n`, `source=csv&owner=${owner.username}`);
    expect(job.state).toBe('done');
    expect(job.progress).toMatchObject({ items: ROWS + 1, created: ROWS - 1, conflicts: 1, failed: 1 });

    const { kept, counted } = await countersAndCounts(t);
    expect(kept).toEqual(counted);
    expect(kept.totals).toEqual([expect.objectContaining({ user_id: owner.id, links: ROWS })]);

    const found = async (q: string): Promise<string[]> => {
      const res = await t.request({ url: `/api/v1/users/me/links?q=${encodeURIComponent(q)}`, token: owner.token });
      expect(res.status, res.text).toBe(200);
      return (res.body.data as Array<{ short_code: string }>).map((l) => l.short_code);
    };
    for (const i of [0, 1, 7, 99, 100, 101, 199, 200, ROWS - 1]) {
      expect(await found(`item-${i}x`), `url of ${i}`).toEqual([`drv${i}`]);
      expect(await found(`t${i}y`), `title of ${i}`).toEqual([`drv${i}`]);
    }
    expect(await found('old-name-161z')).toEqual(['drv161']);
    expect(await found('drv229')).toEqual(['drv229']);
    expect(await found('derived.example/before')).toEqual(['drv5']);

    if (engine === 'sqlite') {
      // Every link has its row in the index, and no other row is there.
      const indexed = await sql<{ id: number }>`select rowid as id from link_search order by rowid`.execute(
        t.storage.db,
      );
      const links = await sql<{ id: number }>`select id from links order by id`.execute(t.storage.db);
      expect(indexed.rows.map((r) => Number(r.id))).toEqual(links.rows.map((r) => Number(r.id)));
    }
  });
});
