import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { importedVisitsWriter } from '../../../src/modules/clicks/index.js';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { DIRECT_REFERRER, UNKNOWN_VALUE } from '../../../src/modules/clicks/event/dimensions.js';
import { DAY_MS, HOUR_MS, referrerValue } from '../../../src/modules/clicks/rollups/rollup-plan.js';
import { engines, type TestApp } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';
import { useTestApp } from '../../helpers/fixtures.js';

const T0 = Date.parse('2022-03-01T05:00:00.000Z');
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
  'Googlebot/2.1 (+http://www.google.com/bot.html)',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  null,
];
const REFERRERS = [
  null,
  'https://news.example/a',
  'https://news.example/b?x=1',
  'android-app://com.example',
  'https://blog.example/',
];

/** Three links with a history over about ten days: fewer distinct values a day than the cap, so every value is kept. */
async function history(t: TestApp): Promise<ClickEvent[]> {
  const owner = await createUser(t);
  const events: ClickEvent[] = [];
  for (const [k, code] of ['imp1', 'imp2', 'imp3'].entries()) {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: `https://example.com/${code}`, short_code: code },
      token: owner.token,
    });
    expect(res.status, res.text).toBe(201);
    for (let i = 0; i < 400 * (k + 1); i += 1) {
      events.push({
        linkId: res.body.id,
        shortCode: code,
        clickedAt: T0 + i * 2_017_000 + k * 977,
        ip: i % 9 === 0 ? null : `203.0.113.${i % 40}`,
        userAgent: AGENTS[i % AGENTS.length]!,
        referrer: REFERRERS[i % REFERRERS.length]!,
        country: i % 6 === 0 ? null : ['US', 'DE', 'FR'][i % 3]!,
      });
    }
  }
  return events;
}

type Counts = Record<string, number>;
const bump = (m: Counts, key: string, n = 1) => void (m[key] = (m[key] ?? 0) + n);
const day = (at: number) => Math.floor(at / DAY_MS) * DAY_MS;

/** What the click records say: clicks per link and day, and human clicks per link, dimension, day and value. */
async function fromRecords(t: TestApp) {
  const records = await t.storage.db
    .selectFrom('clicks')
    .select([
      'link_id',
      'clicked_at',
      'user_agent',
      'referrer',
      'is_bot',
      'browser',
      'os',
      'device',
      'country',
      'imported',
    ])
    .execute();
  const perDay: Counts = {};
  const perValue: Counts = {};
  const userPerDay: Counts = {};
  for (const r of records) {
    expect(Boolean(r.imported)).toBe(true);
    const d = day(Number(r.clicked_at));
    bump(perDay, `${r.link_id}:${d}`);
    bump(userPerDay, `${d}`);
    if (r.is_bot) continue;
    const values: Array<[string, string | null]> = [
      ['referrer', r.referrer ? referrerValue(r.referrer) : DIRECT_REFERRER],
      ['user_agent', r.user_agent || null],
      ['browser', r.browser ?? UNKNOWN_VALUE],
      ['os', r.os ?? UNKNOWN_VALUE],
      ['device', r.device],
      ['country', r.country ?? UNKNOWN_VALUE],
    ];
    for (const [kind, value] of values) if (value !== null) bump(perValue, `${r.link_id}:${kind}:${d}:${value}`);
  }
  return { records: records.length, perDay, perValue, userPerDay };
}

/** What the rollups say, in the same shape. */
async function fromRollups(t: TestApp) {
  const perDay: Counts = {};
  const perValue: Counts = {};
  const userPerDay: Counts = {};
  for (const h of await t.storage.db
    .selectFrom('link_click_hourly')
    .select(['link_id', 'hour_start', 'clicks'])
    .execute()) {
    expect(Number(h.hour_start) % HOUR_MS).toBe(0);
    bump(perDay, `${h.link_id}:${day(Number(h.hour_start))}`, Number(h.clicks));
  }
  for (const v of await t.storage.db
    .selectFrom('link_click_daily_values')
    .select(['link_id', 'kind', 'day_start', 'value', 'clicks'])
    .execute()) {
    bump(perValue, `${v.link_id}:${v.kind}:${v.day_start}:${v.value}`, Number(v.clicks));
  }
  for (const h of await t.storage.db.selectFrom('user_click_hourly').select(['hour_start', 'clicks']).execute())
    bump(userPerDay, `${day(Number(h.hour_start))}`, Number(h.clicks));
  const links = await t.storage.db
    .selectFrom('links')
    .select(sql<number>`sum(click_count)`.as('clicks'))
    .executeTakeFirstOrThrow();
  return { records: Number(links.clicks), perDay, perValue, userPerDay };
}

describe.each(engines)('imported visits in the statistics (SPEC §20) [%s]', (engine) => {
  const t = useTestApp(engine, { env: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' } });

  it('when a history is imported over several transactions, then its rollups per day and per dimension are those of its click records', async () => {
    const events = await history(t);
    const writeImported = importedVisitsWriter(t.storage);
    // Two transactions, batches of uneven size: a (link, hour, value) is added to across batches and commits.
    for (const part of [events.slice(0, 1_300), events.slice(1_300)]) {
      await t.storage.db.transaction().execute(async (tx) => {
        for (let i = 0; i < part.length; i += 333) await writeImported(tx, part.slice(i, i + 333));
      });
    }
    const [records, rollups] = [await fromRecords(t), await fromRollups(t)];
    expect(records.records).toBe(events.length);
    expect(rollups).toEqual(records);
    expect(Object.keys(records.perValue).some((k) => k.includes(':referrer:') && k.endsWith(DIRECT_REFERRER))).toBe(
      true,
    );
  }, 120_000);
});
