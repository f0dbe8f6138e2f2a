import { describe, expect, it } from 'vitest';
import { importedVisitsWriter } from '../../../src/modules/clicks/index.js';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { engines, TestClock } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { uniqueName } from '../../helpers/factories.js';

const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0';
const BOT = 'Googlebot/2.1 (+http://www.google.com/bot.html)';
const NOW = Date.parse('2026-11-20T12:00:00.000Z');
const DAY = 86_400_000;

type Bucket = { start: string; clicks: number; bots: number };
const nonEmpty = (series: Bucket[]) => series.filter((b) => b.clicks + b.bots > 0);
const sum = (series: Bucket[]) => series.reduce((n, b) => [n[0]! + b.clicks, n[1]! + b.bots], [0, 0]);

/**
 * Week and month buckets (issue 38, SPEC §6/§15 shape): ISO weeks and calendar months in the requested zone,
 * the interval chosen when none is asked for, and "all time" reaching back over an imported history of years.
 * Visits are brought in as an importer brings them (dated in the past, into the rollups); the figures come from
 * the rollups only.
 */
describe.each(engines)('statistics by week and month on %s', (engine) => {
  const t = useTestApp(engine, { clock: new TestClock(NOW), env: { TOKEN_TTL_SECONDS: '2592000' } });
  const owner = useUser(t);

  /** A link made at `createdAt` with visits at these instants (a bot where `bots` says), brought in as imported history. */
  async function linkWithHistory(
    createdAt: number,
    visits: Array<{ at: number; bot?: boolean }>,
  ): Promise<{ code: string; id: number }> {
    t.clock.ms = createdAt;
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: {
        original_url: 'https://example.com/history',
        short_code: uniqueName('h')
          .replace(/[^0-9a-zA-Z]/g, '')
          .slice(-8),
      },
    });
    expect(made.status, made.text).toBe(201);
    t.clock.ms = NOW;
    const events: ClickEvent[] = visits.map((v, i) => ({
      linkId: made.body.id,
      shortCode: made.body.short_code,
      clickedAt: v.at,
      ip: `198.51.100.${i % 200}`,
      userAgent: v.bot ? BOT : HUMAN,
      referrer: null,
      country: 'DE',
    }));
    for (let i = 0; i < events.length; i += 500)
      await t.storage.db.transaction().execute((tx) => importedVisitsWriter(t.storage)(tx, events.slice(i, i + 500)));
    return { code: made.body.short_code, id: made.body.id };
  }
  const stats = (code: string, query: string) =>
    t.request({ url: `/api/v1/links/${code}/stats${query}`, token: owner.token });

  it('when interval=month or week in a zone, then calendar months and ISO weeks from local midnight, each visit in its local bucket', async () => {
    // 2026-03-31T22:30Z is 1 April 00:30 in Berlin (summer time), still 31 March in UTC; 2026-03-29T22:30Z is Monday 30 March in Berlin.
    const link = await linkWithHistory(Date.parse('2026-01-05T09:00:00Z'), [
      { at: Date.parse('2026-03-15T10:00:00Z') },
      { at: Date.parse('2026-03-29T22:30:00Z') },
      { at: Date.parse('2026-03-31T22:30:00Z'), bot: true },
      { at: Date.parse('2026-04-02T08:00:00Z') },
    ]);
    const window = '&from=2026-03-01T00:00:00Z&to=2026-05-01T00:00:00Z';
    const utc = await stats(link.code, `?interval=month${window}`);
    expect(utc.status, utc.text).toBe(200);
    expect(utc.body).toMatchObject({
      interval: 'month',
      tz: 'UTC',
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-05-01T00:00:00.000Z',
    });
    expect(utc.body.timeseries).toEqual([
      { start: '2026-03-01T00:00:00.000Z', clicks: 2, bots: 1 },
      { start: '2026-04-01T00:00:00.000Z', clicks: 1, bots: 0 },
    ]);
    const berlin = await stats(link.code, `?interval=month&tz=Europe/Berlin${window}`);
    expect(berlin.body).toMatchObject({
      interval: 'month',
      tz: 'Europe/Berlin',
      from: '2026-02-28T23:00:00.000Z',
      to: '2026-05-31T22:00:00.000Z',
    });
    expect(berlin.body.timeseries).toEqual([
      { start: '2026-02-28T23:00:00.000Z', clicks: 2, bots: 0 },
      { start: '2026-03-31T22:00:00.000Z', clicks: 1, bots: 1 },
      { start: '2026-04-30T22:00:00.000Z', clicks: 0, bots: 0 },
    ]);
    const weeks = await stats(
      link.code,
      '?interval=week&tz=Europe/Berlin&from=2026-03-23T12:00:00Z&to=2026-04-06T00:00:00Z',
    );
    expect(weeks.body).toMatchObject({ interval: 'week', from: '2026-03-22T23:00:00.000Z' });
    expect(weeks.body.timeseries).toEqual([
      { start: '2026-03-22T23:00:00.000Z', clicks: 0, bots: 0 },
      { start: '2026-03-29T22:00:00.000Z', clicks: 2, bots: 1 },
      { start: '2026-04-05T22:00:00.000Z', clicks: 0, bots: 0 },
    ]);
    // v2 names the same bucket sizes.
    const v2 = await t.request({ url: `/api/v2/links/${link.code}/stats?interval=week`, token: owner.token });
    expect(v2.body.interval).toBe('week');
  });

  it('when no interval is asked, then day where the window holds 1,000 days, else week, else month; a window too long even by month is a 400', async () => {
    const link = await linkWithHistory(Date.parse('2019-06-01T00:00:00Z'), [
      { at: Date.parse('2020-02-03T10:00:00Z') },
      { at: Date.parse('2023-12-31T10:00:00Z') },
    ]);
    // The window of the report: four years, refused while only hours and days existed.
    const fourYears = await stats(link.code, '?from=2020-01-01T00:00:00Z&to=2024-01-01T00:00:00Z');
    expect(fourYears.status, fourYears.text).toBe(200);
    expect(fourYears.body.interval).toBe('week');
    expect(fourYears.body.from).toBe('2019-12-30T00:00:00.000Z'); // the Monday of 1 January 2020's ISO week
    expect(fourYears.body.timeseries).toHaveLength(209);
    expect(nonEmpty(fourYears.body.timeseries)).toEqual([
      { start: '2020-02-03T00:00:00.000Z', clicks: 1, bots: 0 },
      { start: '2023-12-25T00:00:00.000Z', clicks: 1, bots: 0 },
    ]);
    expect((await stats(link.code, '?from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).body).toMatchObject({
      interval: 'day',
      timeseries: expect.any(Array),
    });
    const decades = await stats(link.code, '?from=1990-01-01T00:00:00Z&to=2026-01-01T00:00:00Z');
    expect(decades.body.interval).toBe('month');
    expect(decades.body.timeseries).toHaveLength(432);
    // Asked for, an interval is kept: by day, four years is still too many buckets.
    const byDay = await stats(link.code, '?interval=day&from=2020-01-01T00:00:00Z&to=2024-01-01T00:00:00Z');
    expect(byDay.status).toBe(400);
    expect(byDay.body.error.details).toEqual([
      { field: 'from', message: expect.stringMatching(/at most 1000 .*coarser interval/) },
    ]);
    const centuries = await stats(link.code, '?from=1800-01-01T00:00:00Z&to=2026-01-01T00:00:00Z');
    expect(centuries.status).toBe(400);
    expect(centuries.body.error.details[0].field).toBe('from');
  });

  it('when a link has ten years of history, then "all time" (no from) holds all of it, by week unasked and by month asked, in the link, user and domain statistics', async () => {
    const start = Date.parse('2016-11-01T08:00:00Z');
    const visits = Array.from({ length: 10 * 52 }, (_, i) => ({
      at: start + i * 7 * DAY + (i % 24) * 3_600_000,
      bot: i % 10 === 0,
    }));
    // Made today, its history (an import's) reaches back ten years.
    const link = await linkWithHistory(NOW - DAY, visits);
    const humans = visits.filter((v) => !v.bot).length;
    const bots = visits.length - humans;
    const all = await stats(link.code, '');
    expect(all.status, all.text).toBe(200);
    expect(all.body).toMatchObject({
      interval: 'week',
      first_click_at: '2016-11-01T08:00:00.000Z',
      human_clicks: humans,
      bot_clicks: bots,
    });
    expect(Date.parse(all.body.from)).toBeLessThanOrEqual(start);
    expect(sum(all.body.timeseries)).toEqual([humans, bots]);
    for (const tz of ['UTC', 'America/New_York']) {
      const months = await stats(link.code, `?interval=month&tz=${tz}`);
      expect(months.body).toMatchObject({ interval: 'month', tz });
      expect(months.body.timeseries).toHaveLength(121); // November 2016 to November 2026
      expect(sum(months.body.timeseries)).toEqual([humans, bots]);
    }

    const mine = await t.request({ url: '/api/v1/users/me/stats?interval=month', token: owner.token });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.timeseries[0].start).toBe('2016-11-01T00:00:00.000Z');
    expect(sum(mine.body.timeseries)[0]).toBeGreaterThanOrEqual(humans);
    const onDefault = await t.request({
      url: `/api/v1/users/me/stats?domain=${new URL(t.config.publicBaseUrl).hostname}`,
      token: owner.token,
    });
    expect(onDefault.status, onDefault.text).toBe(200);
    expect(onDefault.body.interval).toBe('week');
    expect(sum(onDefault.body.timeseries)[0]).toBeGreaterThanOrEqual(humans);
  });
});
