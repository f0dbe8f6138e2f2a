import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/types.js';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import { clickWriterFor } from '../../src/modules/clicks/click-ingest.js';
import { DAY_MS } from '../../src/modules/clicks/rollups/rollup-plan.js';
import { hotCode, seedScaleClicks, seedScaleLinks, seedTargetOf, type ScalePlan } from '../../bench/lib/scale-seed.js';
import { engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';

const LINKS = 400;
const CLICKS = 1_600;
/** 80 clicks a day: fewer distinct values a day than the top lists keep, so the order values arrive in is moot. */
const DAYS = 20;
const RUNS = 20;
const NOW = Date.parse('2026-06-01T12:00:00.000Z');

/** Every table a click writer writes (but the event feed), each in a stable order. */
async function derived(db: Kysely<Database>, userId: number): Promise<Record<string, unknown[]>> {
  const rows = async (query: ReturnType<typeof sql>) => (await query.execute(db)).rows;
  return {
    links: await rows(sql`select id, click_count, bot_clicks, unique_visitors, first_click_at, last_click_at from links
      where user_id = ${userId} order by id`),
    records:
      await rows(sql`select link_id, short_code, clicked_at, ip, user_agent, referrer, is_bot, browser, os, device,
      country, imported, alias, domain, rule_id, variant_id from clicks order by clicked_at, id`),
    linkHourly: await rows(sql`select * from link_click_hourly order by link_id, hour_start`),
    linkValues: await rows(sql`select * from link_click_daily_values order by link_id, kind, day_start, value`),
    visitors: await rows(sql`select * from link_visitors order by link_id, ip`),
    userHourly: await rows(sql`select * from user_click_hourly order by user_id, hour_start`),
    userValues: await rows(sql`select * from user_click_daily_values order by user_id, kind, day_start, value`),
    ownerTotals: await rows(sql`select * from link_owner_totals order by 1, 2`),
  };
}

/**
 * bench:scale's instance (issue 37 item 6) is generated straight into the database; its rollups, counters and
 * visitors must be what Ferry's click writer writes for the same records, or the benchmark measures another
 * instance than an operator's.
 */
describe.each(engines)('the scale benchmark generated on %s', (engine) => {
  const t = useTestApp(engine);
  const u = useUser(t);

  it('when its records are written again by the click writer, then every rollup and counter is the same', async () => {
    const db = t.storage.db;
    const plan: ScalePlan = { userId: u.id, links: LINKS, clicks: CLICKS, days: DAYS, runs: RUNS, now: NOW };
    await seedScaleLinks(seedTargetOf(t.storage), u.id, LINKS, NOW);
    await seedScaleClicks(seedTargetOf(t.storage), plan);
    const seeded = await derived(db, u.id);
    const seededRecords = seeded.records as Array<{ short_code: string; is_bot: number }>;
    expect(seededRecords).toHaveLength(CLICKS);
    // Every tenth click, and those of the runs that land on it (a few: 400 links for 20 runs of 101).
    const hot = seededRecords.filter((r) => r.short_code === hotCode(LINKS)).length;
    expect(hot).toBeGreaterThanOrEqual(CLICKS / 10);
    expect(hot).toBeLessThan(CLICKS / 5);
    expect(seededRecords.filter((r) => Number(r.is_bot) === 1)).toHaveLength(CLICKS / 20);
    const stats = await t.request({ url: `/api/v1/links/${hotCode(LINKS)}/stats`, token: u.token });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ total_clicks: hot });

    const records = (
      await sql<{
        id: number;
        link_id: number;
        short_code: string;
        clicked_at: number;
        ip: string;
        user_agent: string;
        referrer: string | null;
        country: string | null;
      }>`select * from clicks order by id`.execute(db)
    ).rows;
    await sql`delete from clicks`.execute(db);
    for (const table of [
      'link_click_hourly',
      'link_click_daily_values',
      'link_visitors',
      'user_click_hourly',
      'user_click_daily_values',
    ])
      await sql`delete from ${sql.table(table)}`.execute(db);
    await sql`update links set click_count = 0, bot_clicks = 0, unique_visitors = 0, first_click_at = null,
      last_click_at = null`.execute(db);
    expect((await derived(db, u.id)).records).toHaveLength(0);

    // A day's clicks a batch, as the generator writes them.
    const byDay = new Map<number, ClickEvent[]>();
    for (const r of records) {
      const day = Math.floor(Number(r.clicked_at) / DAY_MS);
      const batch = byDay.get(day) ?? [];
      batch.push({
        linkId: Number(r.link_id),
        shortCode: r.short_code,
        clickedAt: Number(r.clicked_at),
        ip: r.ip,
        userAgent: r.user_agent,
        referrer: r.referrer,
        country: r.country,
      });
      byDay.set(day, batch);
    }
    const writer = clickWriterFor(t.storage);
    try {
      for (const batch of byDay.values()) await writer.writer.write(batch);
    } finally {
      await writer.close();
    }
    expect(await derived(db, u.id)).toEqual(seeded);
  });
});
