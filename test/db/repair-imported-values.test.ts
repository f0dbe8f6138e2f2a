import { describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { up as repair } from '../../src/db/migrations/033-repair-imported-values.js';
import { importedVisitsWriter } from '../../src/modules/clicks/index.js';
import { engines } from '../helpers/app.js';
import { createLink, createUser } from '../helpers/factories.js';
import { useTestApp } from '../helpers/fixtures.js';

/**
 * SPEC §25: no stored value may make a read answer 500. Imports of earlier versions stored titles with line
 * breaks, expiries past 9999 and visits dated +200000 or -000050 as they came; migration 033 repairs them.
 */
describe.each(engines)('migration 033 on %s', (engine) => {
  const t = useTestApp(engine);

  it('when an earlier import left bad titles, dates and visit times, then the repair makes every read of link and owner answer', async () => {
    const owner = await createUser(t, { role: 'admin' });
    const link = await createLink(t, { original_url: 'https://x.example/a' }, owner.token);
    await t.storage.db
      .updateTable('links')
      .set({ title: 'Line\nbreak\tand\u0007bell', expires_at: Date.parse('+200000-01-01T00:00:00Z'), created_at: -1 })
      .where('id', '=', link.id)
      .execute();
    const visit = (iso: string) => ({
      linkId: link.id,
      shortCode: link.short_code,
      clickedAt: Date.parse(iso),
      ip: null,
      userAgent: null,
      referrer: null,
      country: null,
    });
    const write = importedVisitsWriter(t.storage);
    await t.storage.db
      .transaction()
      .execute((tx) =>
        write(tx, [visit('+200000-01-01T00:00:00Z'), visit('-000050-01-01T00:00:00Z'), visit('2022-03-04T05:06:07Z')]),
      );
    const stats = `/api/v1/links/${link.short_code}/stats`;
    expect((await t.app.inject({ url: stats, headers: { authorization: `Bearer ${owner.token}` } })).statusCode).toBe(
      500,
    );

    await repair(t.storage.db as unknown as Kysely<unknown>, t.storage.dialect);

    for (const url of [
      `/api/v1/links/${link.short_code}`,
      `/api/v2/links/${link.short_code}`,
      '/api/v1/users/me/links',
      '/api/v1/links',
      stats,
      `/api/v1/users/${owner.id}/stats`,
    ]) {
      expect((await t.request({ url, token: owner.token })).status, url).toBe(200);
    }
    const read = (await t.request({ url: `/api/v1/links/${link.short_code}`, token: owner.token })).body;
    expect(read).toMatchObject({ title: 'Line break and bell', expires_at: null });
    const times = await t.storage.db.selectFrom('clicks').select('clicked_at').where('link_id', '=', link.id).execute();
    expect(times.map((r) => Number(r.clicked_at))).toEqual([Date.parse('2022-03-04T05:06:07Z')]);
    expect((await t.request({ url: stats, token: owner.token })).body).toMatchObject({
      first_click_at: '2022-03-04T05:00:00.000Z',
      last_click_at: '2022-03-04T05:59:59.999Z',
    });
  });
});
