import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOT_UA, createLink, createUser, visit } from '../helpers/factories.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * Figures the dashboard shows side by side agree, and each is named for what it counts (issue 28): the links
 * list shows people and bots apart as the analytics do; the overview's unique visitors say they are each
 * link's added up; each screen's period menu offers what makes sense there. SQLite only, like the other
 * browser tests (see dashboard-flow.test.ts).
 */
describe.skipIf(missing.chromium !== null)(
  unless(missing.chromium, 'the dashboard in Chromium: figures and periods'),
  () => {
    let d: Dashboard;
    beforeAll(async () => {
      d = await startDashboard();
    });
    afterAll(async () => d?.close());

    const options = (page: Page, label: string) =>
      page.getByLabel(label, { exact: true }).locator('option').allTextContents();

    it("when one person visits two links and a bot one of them, then the links list, the link's analytics and the overview agree, people and bots apart", async () => {
      const u = await createUser(d.t, { status: 'active' });
      const x = await createLink(d.t, { original_url: `${d.landingUrl}?x` }, u.token);
      const y = await createLink(d.t, { original_url: `${d.landingUrl}?y` }, u.token);
      for (const code of [x.short_code, x.short_code, y.short_code])
        expect((await visit(d.t, code, {}, '192.0.2.7')).status).toBe(302);
      expect((await visit(d.t, x.short_code, { 'user-agent': BOT_UA }, '198.51.100.9')).status).toBe(302);
      await d.t.app.clickQueue.flush();

      const { page, watch } = await d.open();
      await d.signIn(page, u.username, u.password);
      const cells = (code: string) => page.getByRole('row').filter({ hasText: code });
      await cells(x.short_code).waitFor();
      await expect(page.getByRole('columnheader').allTextContents()).resolves.toEqual(
        expect.arrayContaining(['People', 'Bots']),
      );
      await expect(cells(x.short_code).locator('td[data-label="People"]').textContent()).resolves.toBe('2');
      await expect(cells(x.short_code).locator('td[data-label="Bots"]').textContent()).resolves.toBe('1');
      await expect(cells(y.short_code).locator('td[data-label="People"]').textContent()).resolves.toBe('1');
      await expect(cells(y.short_code).locator('td[data-label="Bots"]').textContent()).resolves.toBe('0');
      await d.shot(page, 'links-people-bots');

      // The link's analytics: the same 2 and 1, and one visitor.
      await page.getByRole('link', { name: `Analytics of ${x.short_code}` }).click();
      await page.locator('.chart canvas').first().waitFor();
      await expect(page.getByTestId('window-clicks').textContent()).resolves.toBe('2');
      await expect(page.getByTestId('window-bots').textContent()).resolves.toBe('1');
      await page.getByText('Unique visitors, all time').waitFor();
      await expect(page.getByTestId('unique-visitors').textContent()).resolves.toBe('1');

      // The overview: the one person counts once per link, and the figure says so.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
      await page.locator('.chart canvas').first().waitFor();
      await expect(page.getByTestId('window-clicks').textContent()).resolves.toBe('3');
      await expect(page.getByTestId('window-bots').textContent()).resolves.toBe('1');
      await page.getByText('Unique visitors per link, added up').waitFor();
      await expect(page.getByTestId('unique-visitors').textContent()).resolves.toBe('2');
      const note = await page.getByTestId('unique-visitors').getAttribute('aria-describedby');
      await expect(page.locator(`[id="${note}"]`).textContent()).resolves.toBe(
        'Someone who visited two of your links counts once for each.',
      );
      await expect(page.getByText('Unique visitors', { exact: true }).count()).resolves.toBe(0);
      await expect(page.locator('.summary dt').allTextContents()).resolves.toEqual(
        expect.arrayContaining([
          'Clicks by people in this period',
          'Clicks by bots in this period',
          'Clicks by people, all time',
          'Clicks by bots, all time',
        ]),
      );
      await d.shot(page, 'account-figures');

      // Since the account was created, after one link is deleted: the period's figures and the lifetime's agree.
      expect(
        (await d.t.request({ method: 'DELETE', url: `/api/v1/links/${y.short_code}`, token: u.token })).status,
      ).toBe(204);
      // "all" asks without `from`: the API starts at the account's creation.
      const sinceCreated = page.waitForResponse(
        (r) => new URL(r.url()).pathname === '/api/v1/users/me/stats' && !new URL(r.url()).searchParams.has('from'),
      );
      await page.getByLabel('Period').selectOption('all');
      await sinceCreated;
      await expect.poll(() => page.locator('.stats[aria-busy="false"]').count()).toBe(1);
      const figure = (id: string) => page.getByTestId(id).textContent();
      await expect(figure('window-clicks')).resolves.toBe('3');
      await expect(figure('lifetime-clicks')).resolves.toBe('3');
      await expect(figure('window-bots')).resolves.toBe('1');
      await expect(figure('lifetime-bots')).resolves.toBe('1');
      expect(await watch.settled()).toEqual([]);
    });

    it('when the period menus are opened, then each screen offers its own "since created", and by hour only where the hours fit one answer', async () => {
      const u = await createUser(d.t, { status: 'active' });
      const link = await createLink(d.t, { original_url: d.landingUrl }, u.token);
      const { page, watch } = await d.open();
      await d.signIn(page, u.username, u.password);

      await page.goto(`${d.origin}/app/account`);
      await page.locator('.chart canvas').first().waitFor();
      const accountPeriods = await options(page, 'Period');
      expect(accountPeriods).toContain('Since the account was created');
      expect(accountPeriods).not.toContain('Since the link was created');

      await page.goto(`${d.origin}/app/links/${link.short_code}/stats`);
      await page.locator('.chart canvas').first().waitFor();
      const linkPeriods = await options(page, 'Period');
      expect(linkPeriods).toContain('Since the link was created');
      expect(linkPeriods).not.toContain('Since the account was created');

      // Last 7 days: by hour too. Last 90 days (2,160 hours): not by hour, and a chosen "by hour" goes. Since the
      // link was created: automatic unless asked (the API answers by day, week or month, as the window needs).
      await page.getByLabel('Period').selectOption('7d');
      await page.getByLabel('Interval').selectOption('hour');
      await page.waitForURL(/interval=hour/);
      await expect(options(page, 'Interval')).resolves.toEqual([
        'Automatic',
        'By hour',
        'By day',
        'By week',
        'By month',
      ]);
      await page.getByLabel('Period').selectOption('90d');
      await page.waitForURL((u) => u.searchParams.get('period') === '90d' && !u.searchParams.has('interval'));
      await expect.poll(() => options(page, 'Interval')).toEqual(['Automatic', 'By day', 'By week', 'By month']);
      await expect(page.getByLabel('Interval').inputValue()).resolves.toBe('day');
      await page.getByLabel('Period').selectOption('all');
      await expect.poll(() => options(page, 'Interval')).toEqual(['Automatic', 'By day', 'By week', 'By month']);
      await expect(page.getByLabel('Interval').inputValue()).resolves.toBe('auto');

      // A shared URL that asks for 90 days by hour is shown by day, not refused.
      const asked: string[] = [];
      page.on('request', (r) => {
        const url = new URL(r.url());
        if (url.pathname === `/api/v1/links/${link.short_code}/stats`)
          asked.push(url.searchParams.get('interval') ?? '');
      });
      await page.goto(`${d.origin}/app/links/${link.short_code}/stats?period=90d&interval=hour`);
      await page.locator('.chart canvas').first().waitFor();
      await expect(page.getByLabel('Interval').inputValue()).resolves.toBe('day');
      await expect(page.getByRole('alert').count()).resolves.toBe(0);
      // (The menu's last choice may still be on its way: only the intervals asked for matter.)
      expect(asked).toContain('day');
      expect(asked).not.toContain('hour');
      expect(await watch.settled()).toEqual([]);
    });
  },
);
