import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import { createPgClickWriter } from '../../src/modules/clicks/rollups/pg-click-writer.js';
import { orphanThenDelete } from '../helpers/db-state.js';
import { createTestApp, engines, type TestApp } from '../helpers/app.js';
import { createLink, createUser, HUMAN_UA } from '../helpers/factories.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { missing, unless } from '../helpers/skip.js';
import { patchLink } from '../modules/links/links.helpers.js';

/** link_search_text, and the same made from `links` as migration 059 describes it, each in link order. */
async function mirrored(t: TestApp) {
  const copy = await sql<Record<string, unknown>>`select link_id, owner_id, domain_id, expires_at, text
    from link_search_text order by link_id`.execute(t.storage.db);
  const links = await sql<Record<string, unknown>>`select id as link_id, user_id as owner_id, domain_id, expires_at,
      lower(coalesce(title, '')) || chr(1) || lower(short_code) || chr(1) || lower(aliases) || chr(1) ||
      lower(original_url) as text
    from links order by id`.execute(t.storage.db);
  return { copy: copy.rows, links: links.rows };
}

/**
 * Migration 059: on PostgreSQL a search no index narrows is counted in link_search_text, so it must hold every
 * link's searched text and filtered columns after any write to `links`, in the same transaction: created (API,
 * anonymous, with an alias), edited (PATCH), expired in place, clicked (the set writer changes only counters),
 * orphaned (the owner deleted) and deleted.
 */
describe.skipIf(missing.postgres !== null)(unless(missing.postgres, 'the search text table'), () => {
  it('when links are created, edited, expired, clicked, orphaned and deleted, then link_search_text holds each as links does', async () => {
    const t = await createTestApp('postgres');
    try {
      const [alice, bob] = [await createUser(t), await createUser(t)];
      const made = [
        await createLink(t, { original_url: 'https://example.com/a1', title: 'First' }, alice.token),
        await createLink(t, { original_url: 'https://example.com/a2', aliases: ['spring-sale'] }, alice.token),
        await createLink(t, { original_url: 'https://example.com/b1' }, bob.token),
        await createLink(t, { original_url: 'https://example.com/anon' }),
      ];
      let state = await mirrored(t);
      expect(state.copy).toHaveLength(4);
      expect(state.copy).toEqual(state.links);

      const edited = await patchLink(
        t,
        made[0]!.short_code,
        { title: 'Été à Paris', original_url: 'https://Example.org/new', aliases: ['summer-sale'] },
        { token: alice.token },
      );
      expect(edited.status, edited.text).toBe(200);
      await t.storage.db.updateTable('links').set({ expires_at: 1 }).where('id', '=', made[1]!.id).execute();
      const before = (await mirrored(t)).copy;
      await createPgClickWriter(t.storage).write(
        [made[2]!, made[3]!].map((link, i): ClickEvent => ({
          linkId: link.id,
          shortCode: link.short_code,
          clickedAt: t.clock.now() + i,
          ip: `10.9.0.${i}`,
          userAgent: HUMAN_UA,
          referrer: null,
        })),
      );
      state = await mirrored(t);
      expect(state.copy).toEqual(before);
      expect(state.copy[0]!.text).toBe(
        `été à paris\u0001${made[0]!.short_code.toLowerCase()}\u0001summer-sale\u0001https://example.org/new`,
      );
      expect(state.copy[1]).toMatchObject({ expires_at: 1 });
      expect(state.copy).toEqual(state.links);

      await orphanThenDelete(t, bob, made[0]!, alice.token);
      state = await mirrored(t);
      expect(state.copy).toHaveLength(3);
      expect(state.copy.find((r) => Number(r.link_id) === made[2]!.id)?.owner_id).toBeNull();
      expect(state.copy).toEqual(state.links);
    } finally {
      await t.close();
    }
  });
});

/** A page's total and codes; fails the test unless the list answered 200. */
async function listed(t: TestApp, url: string, token: string) {
  const res = await t.request({ url, token });
  expect(res.status, res.text).toBe(200);
  return {
    total: res.body.pagination.total as number,
    codes: res.body.data.map((l: { short_code: string }) => l.short_code),
  };
}

/**
 * A search no index narrows (one character; on PostgreSQL counted in link_search_text, on SQLite on the scan
 * threads): its page-mode total is every match of the list's own rows, a user's live links or everyone's, in any
 * case, in any of the four columns, and none beyond them (a comma is not searched in the aliases).
 */
describe.each(engines)('the total of a search no index narrows on %s', (engine) => {
  const t = useTestApp(engine);
  const owner = useUser(t);
  const admin = useUser(t, { role: 'admin', status: 'active' });

  it('when q is one character, then the user’s and the admin’s totals count its matches among the links each list holds', async () => {
    const other = await createUser(t);
    // Codes of their own: a random one may hold the letter searched for.
    const coded = (n: number) => ({ short_code: `lsc${n}` });
    const mine = [
      await createLink(t, { ...coded(1), original_url: 'https://example.com/1', title: 'Quiet' }, owner.token), // title
      await createLink(t, { ...coded(2), original_url: 'https://example.com/q' }, owner.token), // URL
      await createLink(
        t,
        { ...coded(3), original_url: 'https://example.com/2', aliases: ['old-quote', 'sale-2'] },
        owner.token,
      ), // alias
      await createLink(t, { ...coded(4), original_url: 'https://example.com/3', title: 'Nothing' }, owner.token), // none
      await createLink(t, { ...coded(5), original_url: 'https://example.com/4', title: 'Q expired' }, owner.token), // expired
    ];
    await t.storage.db.updateTable('links').set({ expires_at: 1 }).where('id', '=', mine[4]!.id).execute();
    await createLink(t, { ...coded(6), original_url: 'https://elsewhere.example/q' }, other.token);
    await createLink(t, { ...coded(7), original_url: 'https://example.com/5', title: 'Anonymous Q' });

    // A user's list holds their live links: three match (the expired one is gone from it), in any case.
    for (const q of ['q', 'Q']) {
      const page = await listed(t, `/api/v1/users/${owner.id}/links?q=${q}&limit=2`, owner.token);
      expect(page.total, q).toBe(3);
      expect(page.codes).toHaveLength(2);
    }
    // The admin's holds every link: the owner's four with the expired one, the other user's, the anonymous one.
    expect((await listed(t, '/api/v1/links?q=q&limit=2', admin.token)).total).toBe(6);
    expect((await listed(t, `/api/v1/links?q=Q&user_id=${owner.id}`, admin.token)).total).toBe(4);
    expect((await listed(t, `/api/v1/links?q=z&user_id=${owner.id}`, admin.token)).total).toBe(0);
    // A comma is never searched in the aliases (stored comma-separated: `old-quote,sale-2`): `,` matches no link.
    expect((await listed(t, '/api/v1/links?q=,', admin.token)).total).toBe(0);
  });
});
