import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { clickWriterFor } from '../../../src/modules/clicks/click-ingest.js';
import { engines, TestClock } from '../../helpers/app.js';
import { createLink } from '../../helpers/factories.js';
import { useTestApp } from '../../helpers/fixtures.js';

const T0 = Date.parse('2026-01-10T08:00:00.000Z');
const DAY = 86_400_000;

/**
 * Windows over closed months are answered partly from remembered monthly sums (closed-months.ts): the
 * answer must be the one the rows give, on the first request and on the next.
 */
describe.each(engines)('statistics over closed months on %s', (engine) => {
  const t = useTestApp(engine, { clock: new TestClock(T0) });

  it('when a window covers whole past months and partial ones, then series and top lists equal the sums of the rows, twice', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/m' });
    const events: ClickEvent[] = [];
    // 120 days from Jan 10: every day 1-3 visits, from referrers and agents whose ranking changes over time.
    for (let d = 0; d < 120; d += 1) {
      for (let i = 0; i < 1 + (d % 3); i += 1) {
        events.push({
          linkId: link.id,
          shortCode: link.short_code,
          clickedAt: T0 + d * DAY + i * 3_600_000,
          ip: `10.0.${d}.${i}`,
          userAgent: `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${100 + ((d * 7 + i) % 13)}.0.0.0 Safari/537.36`,
          referrer: `https://site${d % 17 < 5 ? 'a' : d % 17}.example/x`,
        });
      }
    }
    await clickWriterFor(t.storage).writer.write(events);
    t.clock.advance(150 * DAY); // all of it months ago
    const from = new Date(T0 + 5 * DAY).toISOString();
    const to = new Date(T0 + 100 * DAY).toISOString();
    const inWindow = events.filter(
      (e) => e.clickedAt >= Date.parse(from.slice(0, 10)) && e.clickedAt < Date.parse(to.slice(0, 10)) + DAY,
    );
    const top = (pick: (e: ClickEvent) => string) => {
      const n = new Map<string, number>();
      for (const e of inWindow) n.set(pick(e), (n.get(pick(e)) ?? 0) + 1);
      return [...n]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, 10)
        .map(([value, clicks]) => ({ value, clicks }));
    };
    for (let round = 0; round < 2; round += 1) {
      const res = await t.request({ url: `/api/v1/links/${link.short_code}/stats?from=${from}&to=${to}` });
      expect(res.status).toBe(200);
      const series = res.body.timeseries as Array<{ start: string; clicks: number }>;
      expect(series).toHaveLength(96);
      expect(series.reduce((n, b) => n + b.clicks, 0)).toBe(inWindow.length);
      for (const b of series)
        expect(b.clicks).toBe(
          inWindow.filter((e) => e.clickedAt >= Date.parse(b.start) && e.clickedAt < Date.parse(b.start) + DAY).length,
        );
      expect(res.body.top_user_agents).toEqual(top((e) => e.userAgent!));
      expect(res.body.top_referrers).toEqual(top((e) => new URL(e.referrer!).origin));
      expect(res.body.top_browsers).toEqual([{ value: 'Chrome', clicks: inWindow.length }]);
    }
  }, 30_000);
});
