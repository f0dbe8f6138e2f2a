import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { engines, type TestApp } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { RARE_TAG } from '../../../src/modules/links/link-list-plans.js';
import { createLink, patchLink, visit, BOT_UA } from './links.helpers.js';

const MINUTE = 60_000;

/** The owners' counters as the database keeps them (migration 050). */
async function kept(t: TestApp) {
  const totals = await sql<Record<string, unknown>>`select user_id, domain_id, links, clicks, bots, unique_visitors
    from link_owner_totals where links <> 0 or clicks <> 0 order by user_id, domain_id`.execute(t.storage.db);
  const tags = await sql<Record<string, unknown>>`select user_id, tag, domain_id, links from link_owner_tags
    where links <> 0 order by user_id, tag, domain_id`.execute(t.storage.db);
  return { totals: totals.rows.map(numbers), tags: tags.rows.map(numbers) };
}

/** The same counted from the links themselves. */
async function counted(t: TestApp) {
  const totals = await sql<
    Record<string, unknown>
  >`select user_id, domain_id, count(*) as links, sum(click_count) as clicks,
    sum(bot_clicks) as bots, sum(unique_visitors) as unique_visitors from links where user_id is not null
    group by user_id, domain_id order by user_id, domain_id`.execute(t.storage.db);
  const tags = await sql<Record<string, unknown>>`select l.user_id, lt.tag, l.domain_id, count(*) as links
    from link_tags lt join links l on l.id = lt.link_id where l.user_id is not null
    group by l.user_id, lt.tag, l.domain_id order by l.user_id, lt.tag, l.domain_id`.execute(t.storage.db);
  return { totals: totals.rows.map(numbers), tags: tags.rows.map(numbers) };
}

const numbers = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k === 'tag' ? v : Number(v)]));

/**
 * A user's figures and a list's page-mode total come from counters the database keeps per owner (links,
 * clicks, tags: db/owner-totals.ts, db/owner-tags.ts) instead of from every link: they must stay exactly what
 * counting the links gives, through every kind of write, on both engines.
 */
describe.each(engines)("owners' counters on %s", (engine) => {
  const t = useTestApp(engine);

  /** Every link of the list (a user's: `/api/v1/users/{id}/links`) with `query`, walked by cursor (which counts nothing). */
  async function walked(path: string, token: string, query: string): Promise<number> {
    let n = 0;
    let cursor: string | null = null;
    do {
      const res = await t.request({ url: `${path}?limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`, token });
      expect(res.status, res.text).toBe(200);
      n += (res.body.data as unknown[]).length;
      cursor = res.body.pagination.nextCursor as string | null;
    } while (cursor);
    return n;
  }

  async function total(path: string, token: string, query: string): Promise<number> {
    const res = await t.request({ url: `${path}?limit=1${query}`, token });
    expect(res.status, res.text).toBe(200);
    return res.body.pagination.total as number;
  }

  it('when links are created, tagged, retagged, clicked, expired, deleted, bulk-created and their owner deleted, then the counters are the counts', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const admin = await createUser(t, { role: 'admin' });
    const made = [];
    for (let i = 0; i < 8; i += 1) {
      made.push(
        await createLink(
          t,
          {
            original_url: `https://counters.example/${i}`,
            tags: i % 2 === 0 ? ['even', 'all'] : ['all'],
            ...(i === 7 ? { expires_at: new Date(t.clock.now() + MINUTE).toISOString() } : {}),
          },
          u.token,
        ),
      );
    }
    await createLink(t, { original_url: 'https://counters.example/other', tags: ['even'] }, other.token);
    await createLink(t, { original_url: 'https://counters.example/anonymous' });
    for (const [i, ua] of [
      [0, undefined],
      [0, BOT_UA],
      [1, undefined],
      [3, undefined],
    ] as const)
      await visit(t, made[i]!.short_code, ua ? { 'user-agent': ua } : {}, `10.0.0.${i + 1}`);
    await t.app.clickQueue.flush();
    expect((await patchLink(t, made[2]!.short_code, { tags: ['odd'] }, { token: u.token })).status).toBe(200);
    expect((await patchLink(t, made[5]!.short_code, { tags: [] }, { token: u.token })).status).toBe(200);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${made[0]!.short_code}`, token: u.token })).status,
    ).toBe(204);
    const bulk = await t.request({
      method: 'POST',
      url: '/api/v1/links/bulk',
      token: u.token,
      payload: {
        links: [
          { original_url: 'https://counters.example/b1', tags: ['even'] },
          { original_url: 'https://counters.example/b2' },
        ],
      },
    });
    expect(bulk.status, bulk.text).toBe(200);
    expect(await kept(t)).toEqual(await counted(t));

    // Past its expiry a link leaves the list at once, before the sweep removes its row.
    t.clock.advance(2 * MINUTE);
    const mine = `/api/v1/users/${u.id}/links`;
    const all = '/api/v1/links';
    const agree = async () => {
      for (const query of ['', '&tag=all', '&tag=even', '&tag=odd', '&tag=none'])
        expect(await total(mine, u.token, query), query).toBe(await walked(mine, u.token, query));
      for (const query of ['', '&tag=even', '&tag=all', `&user_id=${u.id}`, `&user_id=${u.id}&tag=even`])
        expect(await total(all, admin.token, query), query).toBe(await walked(all, admin.token, query));
    };
    await agree();
    expect(await total(mine, u.token, '')).toBe(8);
    expect(await total(all, admin.token, `&user_id=${u.id}`)).toBe(9);
    await t.app.runJob('sweep-expired-links');
    expect(await kept(t)).toEqual(await counted(t));
    await agree();

    const stats = (await t.request({ url: `/api/v1/users/${u.id}/stats`, token: u.token })).body;
    expect(stats).toMatchObject({ links: 8, total_clicks: 4, bot_clicks: 1 });

    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${u.id}`, token: admin.token })).status).toBe(204);
    expect(await kept(t)).toEqual(await counted(t));
  });

  it('when more links carry a tag than RARE_TAG, then its pages walk the list probing each link and agree with the counted total', async () => {
    const u = await createUser(t);
    const n = RARE_TAG + 50;
    const now = t.clock.now();
    for (let from = 0; from < n; from += 500) {
      const rows = Array.from({ length: Math.min(500, n - from) }, (_, k) => {
        const i = from + k;
        return {
          short_code: `ct${u.id}x${i}`,
          user_id: u.id,
          original_url: `https://common-tag.example/${i}`,
          created_at: now - i,
          updated_at: now - i,
          tags: i % 5 === 0 ? 'crowd,fifth' : 'crowd',
        };
      });
      const ids = await t.storage.db.insertInto('links').values(rows).returning(['id', 'tags']).execute();
      await t.storage.db
        .insertInto('link_tags')
        .values(ids.flatMap((r) => r.tags.split(',').map((tag) => ({ link_id: r.id, tag }))))
        .execute();
    }
    expect(await kept(t)).toEqual(await counted(t));
    const mine = `/api/v1/users/${u.id}/links`;
    expect(await total(mine, u.token, '&tag=crowd')).toBe(n);
    expect(await walked(mine, u.token, '&tag=crowd&order=desc')).toBe(n);
    const newest = await t.request({ url: `${mine}?tag=fifth&sort=created_at&order=desc&limit=5`, token: u.token });
    expect(newest.status).toBe(200);
    expect(newest.body.pagination.total).toBe(Math.ceil(n / 5));
    expect((newest.body.data as Array<{ original_url: string }>).map((l) => l.original_url)).toEqual(
      [0, 5, 10, 15, 20].map((i) => `https://common-tag.example/${i}`),
    );
  });
});
