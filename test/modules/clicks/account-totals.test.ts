import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { UA } from './user-agents.js';

/**
 * The figures the dashboard puts side by side must agree: a link's people and bots in the list are its
 * analytics' human_clicks and bot_clicks; the account's "all time" keeps the clicks of links deleted since,
 * as the per-user rollups behind "this period" do, so a period never shows more than all time.
 */
describe.each(engines)('link and account click totals on %s', (engine) => {
  const t = useTestApp(engine);

  const create = async (token: string) =>
    (
      await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token,
        payload: { original_url: 'https://example.com/totals' },
      })
    ).body as { short_code: string };
  const visit = (code: string, ua: string) => t.app.inject({ url: `/${code}`, headers: { 'user-agent': ua } });

  it("when a link has clicks by people and bots, then its record's human_clicks and bot_clicks are its analytics' (v1 and v2)", async () => {
    const u = await createUser(t);
    const link = await create(u.token);
    for (const ua of [UA.chromeWindows, UA.safariIphone, UA.googlebot, UA.curl, UA.slackbot])
      await visit(link.short_code, ua);
    await t.app.clickQueue.flush();
    const record = (await t.request({ url: `/api/v1/links/${link.short_code}`, token: u.token })).body;
    const stats = (await t.request({ url: `/api/v1/links/${link.short_code}/stats`, token: u.token })).body;
    expect(record).toMatchObject({ click_count: 5, human_clicks: 2, bot_clicks: 3 });
    expect(stats).toMatchObject({ human_clicks: record.human_clicks, bot_clicks: record.bot_clicks });
    const listed = (await t.request({ url: '/api/v2/users/me/links', token: u.token })).body.data[0];
    expect(listed).toMatchObject({ clickCount: 5, humanClicks: 2, botClicks: 3 });
  });

  it("when one of the account's links is deleted, then its clicks stay in the account's all-time figures, which equal the period since the account began", async () => {
    const u = await createUser(t);
    const kept = await create(u.token);
    const deleted = await create(u.token);
    for (const [code, ua] of [
      [kept.short_code, UA.chromeWindows],
      [kept.short_code, UA.googlebot],
      [deleted.short_code, UA.safariIphone],
      [deleted.short_code, UA.curl],
      [deleted.short_code, UA.slackbot],
    ] as const)
      await visit(code, ua);
    await t.app.clickQueue.flush();
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${deleted.short_code}`, token: u.token })).status,
    ).toBe(204);
    const account = (await t.request({ url: '/api/v1/users/me/stats', token: u.token })).body;
    const period = account.timeseries.reduce(
      (sum: { people: number; bots: number }, b: { clicks: number; bots: number }) => ({
        people: sum.people + b.clicks,
        bots: sum.bots + b.bots,
      }),
      { people: 0, bots: 0 },
    );
    expect(account).toMatchObject({ links: 1, total_clicks: 5, human_clicks: 2, bot_clicks: 3 });
    expect(period).toEqual({ people: account.human_clicks, bots: account.bot_clicks });
  });
});
