import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../helpers/factories.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * The analytics screens on real clicks (SPEC §15, §16): people and bots apart in the chart's data and the
 * figures, the ranked panels, the time zone, and the account overview with its top links. SQLite only, like
 * the other browser tests (see dashboard-flow.test.ts).
 */
const CHROME_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: analytics'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  it('when a link has visits by people and a bot, then its analytics and the account overview show them apart, by panel and in another time zone', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const created = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      payload: { original_url: d.landingUrl },
    });
    const code = created.body.short_code as string;
    const visit = (ua: string, referer?: string) =>
      fetch(`${d.origin}/${code}`, {
        redirect: 'manual',
        headers: { 'user-agent': ua, ...(referer ? { referer } : {}) },
      });
    for (let i = 0; i < 3; i++)
      expect((await visit(CHROME_UA, i < 2 ? 'https://news.example/story' : undefined)).status).toBe(302);
    expect((await visit(BOT_UA)).status).toBe(302);
    await d.t.app.clickQueue.flush();

    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.goto(`${d.origin}/app/links/${code}/stats`);
    await page.locator('.chart canvas').first().waitFor();
    const sum = (attr: string) =>
      page
        .locator(`.chart-data td[${attr}]`)
        .evaluateAll((cells, a) => cells.reduce((s, c) => s + Number(c.getAttribute(a)), 0), attr);
    await expect(sum('data-clicks')).resolves.toBe(3);
    await expect(sum('data-bots')).resolves.toBe(1);
    await expect(page.getByTestId('window-clicks').textContent()).resolves.toBe('3');
    await expect(page.getByTestId('window-bots').textContent()).resolves.toBe('1');
    const panel = (name: string) => page.getByRole('region', { name });
    await expect(panel('Browsers').textContent()).resolves.toMatch(/Chrome\s*3/);
    await expect(panel('Operating systems').textContent()).resolves.toMatch(/Windows\s*3/);
    await expect(panel('Devices').textContent()).resolves.toMatch(/desktop\s*3/);
    await expect(panel('Top referrers').textContent()).resolves.toMatch(/news\.example\s*2/);
    await expect(panel('Top referrers').textContent()).resolves.toMatch(/\(direct\)\s*1/);
    // The screenshot in docs/dashboard.md (docs/dashboard-link-analytics.png) is this one.
    await d.shot(page, 'link-analytics-panels');

    // Another zone: the buckets are its hours, the clicks the same.
    await page.getByLabel('Interval').selectOption('hour');
    await page.getByLabel('Time zone').selectOption('Asia/Tokyo');
    await page.getByText('Chart data').click();
    await page.getByRole('columnheader', { name: 'Hour (Asia/Tokyo)' }).waitFor();
    await expect(sum('data-clicks')).resolves.toBe(3);
    await expect(sum('data-bots')).resolves.toBe(1);

    // The account overview: the same clicks over all links, and this link on top.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Account overview' }).waitFor();
    await page.locator('.chart canvas').first().waitFor();
    await expect(page.getByTestId('window-clicks').textContent()).resolves.toBe('3');
    await expect(page.getByTestId('window-bots').textContent()).resolves.toBe('1');
    await expect(panel('Top links').textContent()).resolves.toMatch(new RegExp(`${code}\\s*3`));
    await d.shot(page, 'account');
    await panel('Top links')
      .getByRole('link', { name: `Analytics of ${code}` })
      .click();
    await page.getByRole('heading', { name: `Analytics of ${code}` }).waitFor();
    expect(await watch.settled()).toEqual([]);
  });
});
