import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importedVisitsWriter } from '../../src/modules/clicks/index.js';
import { createUser } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';

const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0';
const DAY = 86_400_000;

/**
 * History people can see (issue 38): a link whose imported visits go back years shows them since its creation,
 * by week unasked (the API's choice, in the dashboard's "Automatic"), and by month when asked. SQLite only, like
 * the other browser tests (dashboard-flow.test.ts); the API's intervals are tested on both engines
 * (test/modules/clicks/stats-intervals.test.ts).
 */
describe.skipIf(missing.chromium !== null)(
  unless(missing.chromium, 'the dashboard in Chromium: years of history'),
  () => {
    let d: Dashboard;
    beforeAll(async () => {
      d = await startDashboard();
    });
    afterAll(async () => d?.close());

    it('when a link has visits over six years, then "Since the link was created" charts all of them by week, and by month when asked', async () => {
      const u = await createUser(d.t, { status: 'active' });
      const made = await d.t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: u.token,
        payload: { original_url: d.landingUrl },
      });
      const code = made.body.short_code as string;
      // Four visits in 2021 and one last year, as an import brings them (the rollups, on their own dates).
      const at = [
        Date.parse('2021-04-01T10:00:00Z'),
        Date.parse('2021-04-02T10:00:00Z'),
        Date.parse('2021-09-09T10:00:00Z'),
        Date.parse('2021-12-24T10:00:00Z'),
        Date.now() - 365 * DAY,
      ];
      await d.t.storage.db.transaction().execute((tx) =>
        importedVisitsWriter(d.t.storage)(
          tx,
          at.map((clickedAt, i) => ({
            linkId: made.body.id,
            shortCode: code,
            clickedAt,
            ip: `198.51.100.${i}`,
            userAgent: HUMAN,
            referrer: null,
            country: null,
          })),
        ),
      );

      const { page, watch } = await d.open();
      await d.signIn(page, u.username, u.password);
      await page.goto(`${d.origin}/app/links/${code}/stats?period=all&tz=UTC`);
      await page.locator('.chart canvas').first().waitFor();
      await expect(page.getByLabel('Interval').inputValue()).resolves.toBe('auto');
      await expect(page.getByTestId('lifetime-clicks').textContent()).resolves.toBe('5');
      await expect(page.getByTestId('window-clicks').textContent()).resolves.toBe('5');
      await page.getByText('Chart data').click();
      await page.getByRole('columnheader', { name: 'Week of (UTC)' }).waitFor();
      const sum = () =>
        page
          .locator('.chart-data td[data-clicks]')
          .evaluateAll((cells) => cells.reduce((s, c) => s + Number(c.getAttribute('data-clicks')), 0));
      await expect(sum()).resolves.toBe(5);
      await expect(page.locator('.chart-data time').first().textContent()).resolves.toBe('2021-03-29'); // the Monday of the first visit's week
      await d.shot(page, 'link-analytics-years-by-week');

      await page.getByLabel('Interval').selectOption('month');
      await page.waitForURL(/interval=month/);
      await page.getByRole('columnheader', { name: 'Month (UTC)' }).waitFor();
      await expect.poll(sum).toBe(5);
      await expect(page.locator('.chart-data time').first().textContent()).resolves.toBe('2021-04');
      expect(await watch.settled()).toEqual([]);
    });
  },
);
