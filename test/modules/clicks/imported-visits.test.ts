import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { createPgClickWriter } from '../../../src/modules/clicks/rollups/pg-click-writer.js';
import { createImportedVisitsWriter } from '../../../src/modules/clicks/rollups/sqlite-rollup-writer.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';

const T0 = Date.parse('2021-05-01T08:00:00.000Z');
const AGENTS = [
  null,
  'Googlebot/2.1 (+http://www.google.com/bot.html)',
  'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
];

/** Every row of records and rollups, ids left out, in a stable order. */
function rows(t: TestApp): Record<string, unknown[]> {
  const q = (sql: string) => t.storage.sqlite!.prepare(sql).all();
  return {
    clicks: q(
      'select short_code, clicked_at, ip, user_agent, referrer, is_bot, browser, os, device, country, imported from clicks order by short_code, clicked_at, ip',
    ),
    links: q(
      'select short_code, click_count, bot_clicks, unique_visitors, first_click_at, last_click_at from links order by short_code',
    ),
    hourly: q(
      'select l.short_code, h.hour_start, h.clicks, h.bots from link_click_hourly h join links l on l.id = h.link_id order by 1, 2',
    ),
    daily: q(
      'select l.short_code, d.kind, d.day_start, d.value, d.clicks from link_click_daily_values d join links l on l.id = d.link_id order by 1, 2, 3, 4',
    ),
    visitors: q('select l.short_code, v.ip from link_visitors v join links l on l.id = v.link_id order by 1, 2'),
    userHourly: q('select hour_start, clicks, bots from user_click_hourly order by hour_start'),
    userDaily: q('select kind, day_start, value, clicks from user_click_daily_values order by kind, day_start, value'),
  };
}

/** A user's two links (the same codes in each app) and a history of visits on them over a few days. */
async function linksWithHistory(t: TestApp): Promise<ClickEvent[]> {
  const owner = await createUser(t);
  const events: ClickEvent[] = [];
  for (const code of ['hist1', 'hist2']) {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: `https://example.com/${code}`, short_code: code },
      token: owner.token,
    });
    expect(res.status, res.text).toBe(201);
    for (let i = 0; i < 700; i += 1) {
      events.push({
        linkId: res.body.id,
        shortCode: code,
        clickedAt: T0 + i * 431_000,
        ip: i % 7 === 0 ? null : `198.51.100.${i % 90}`,
        userAgent: AGENTS[i % 8 < 2 ? i % 8 : 2 + (i % 2)]!,
        referrer: i % 3 === 0 ? null : `https://ref${i}.example/p`,
        country: i % 5 === 0 ? null : ['US', 'DE'][i % 2]!,
      });
    }
  }
  return events;
}

describe('imported visits (SPEC §20)', () => {
  it('when visits are imported inside a transaction on the embedded engine, then they leave the rows of the portable writer, each record marked imported', async () => {
    const env = { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' };
    const [a, b] = [await createTestApp('sqlite', { env }), await createTestApp('sqlite', { env })];
    try {
      const [ea, eb] = [await linksWithHistory(a), await linksWithHistory(b)];
      // The embedded engine's statements (sqlite-rollup-writer.ts) on one, Kysely's on the other.
      const prepared = createImportedVisitsWriter(a.storage.sqlite!);
      const portable = createPgClickWriter(b.storage).writeImported;
      for (const [app, writeImported, events] of [
        [a, prepared, ea],
        [b, portable, eb],
      ] as const) {
        await app.storage.db.transaction().execute(async (tx) => {
          for (let i = 0; i < events.length; i += 500) await writeImported(tx, events.slice(i, i + 500));
        });
      }
      const [ra, rb] = [rows(a), rows(b)];
      expect(ra.clicks).toHaveLength(1400);
      expect((ra.clicks as Array<{ imported: number }>).every((c) => c.imported === 1)).toBe(true);
      // more than 100 referrers a day: the cap's "(other)" too
      expect(new Set((ra.daily as Array<{ value: string }>).map((r) => r.value))).toContain('(other)');
      expect(ra).toEqual(rb);
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);

  it('when the embedded engine is asked to write imported visits outside a transaction, then it refuses', async () => {
    const t = await createTestApp('sqlite');
    const writeImported = createImportedVisitsWriter(t.storage.sqlite!);
    try {
      await expect(writeImported(null as never, [])).rejects.toThrow(/inside the import transaction/);
    } finally {
      await t.close();
    }
  });
});
