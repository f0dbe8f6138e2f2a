import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import { createPgClickWriter } from '../../src/modules/clicks/rollups/pg-click-writer.js';
import { orphanThenDelete } from '../helpers/db-state.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createLink, createUser } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';

/** link_click_order and what it mirrors of `links`, each in link order. */
async function mirrored(t: TestApp) {
  const order = await sql<{ link_id: number; user_id: number | null; click_count: number }>`select link_id,
    owner_id as user_id, clicks as click_count from link_click_order order by link_id`.execute(t.storage.db);
  const links = await sql<{ link_id: number; user_id: number | null; click_count: number }>`select id as link_id,
    user_id, click_count from links order by id`.execute(t.storage.db);
  return { order: order.rows, links: links.rows };
}

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0';

/**
 * Migration 056: on PostgreSQL the lists sorted by clicks read link_click_order, so it must hold every link's
 * owner and count after any write to `links`, in the same transaction: created (API, anonymous), clicked (the
 * scale-out set writer), counted directly, its owner deleted (the foreign key sets the owner to null), deleted.
 */
describe.skipIf(missing.postgres !== null)(unless(missing.postgres, 'the click order table'), () => {
  it('when links are created, clicked, recounted, orphaned and deleted, then link_click_order holds each one as links does', async () => {
    const t = await createTestApp('postgres');
    try {
      const [alice, bob] = [await createUser(t), await createUser(t)];
      const made = [
        await createLink(t, { original_url: 'https://example.com/a1' }, alice.token),
        await createLink(t, { original_url: 'https://example.com/a2' }, alice.token),
        await createLink(t, { original_url: 'https://example.com/b1' }, bob.token),
        await createLink(t, { original_url: 'https://example.com/anon' }),
      ];
      let state = await mirrored(t);
      expect(state.order).toHaveLength(4);
      expect(state.order).toEqual(state.links);

      const clicks = (link: (typeof made)[number], n: number): ClickEvent[] =>
        Array.from({ length: n }, (_, i) => ({
          linkId: link.id,
          shortCode: link.short_code,
          clickedAt: t.clock.now() + i,
          ip: `10.9.0.${i}`,
          userAgent: BROWSER,
          referrer: null,
        }));
      await createPgClickWriter(t.storage).write([
        ...clicks(made[0]!, 3),
        ...clicks(made[2]!, 5),
        ...clicks(made[3]!, 1),
      ]);
      await t.storage.db.updateTable('links').set({ click_count: 40 }).where('id', '=', made[1]!.id).execute();
      state = await mirrored(t);
      expect(state.order.map((r) => Number(r.click_count))).toEqual([3, 40, 5, 1]);
      expect(state.order).toEqual(state.links);

      await orphanThenDelete(t, bob, made[0]!, alice.token);
      state = await mirrored(t);
      expect(state.order).toHaveLength(3);
      expect(state.order.find((r) => Number(r.link_id) === made[2]!.id)?.user_id).toBeNull();
      expect(state.order).toEqual(state.links);

      // and the lists read it: Alice's links by clicks, everyone's with the order's own index
      const mine = await t.request({
        url: `/api/v1/users/${alice.id}/links?sort=click_count&order=desc`,
        token: alice.token,
      });
      expect(mine.status, mine.text).toBe(200);
      expect(mine.body.data.map((l: { short_code: string }) => l.short_code)).toEqual([made[1]!.short_code]);
    } finally {
      await t.close();
    }
  });
});
