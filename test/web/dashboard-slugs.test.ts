import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { horizontalOverflow } from '../helpers/browser.js';
import { createUser } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';
import { ADMIN, startDashboard, type Dashboard } from './dashboard-fixture.js';

/** The DOM names the line count below uses (the test project is Node's, without the DOM library). */
interface TextNode {
  data: string;
}
interface Rect {
  top: number;
}
interface InPage {
  document: {
    createTreeWalker(root: unknown, show: number): { nextNode(): TextNode | null };
    createRange(): {
      setStart(node: TextNode, at: number): void;
      setEnd(node: TextNode, at: number): void;
      getClientRects(): ArrayLike<Rect>;
    };
  };
}

/**
 * On how many lines each short URL's host is drawn, row by row (1: never split). Markup-blind: it measures each
 * character of the origin (scheme, host, port) where it is drawn.
 */
const originLines = (page: Page, selector: string): Promise<number[]> =>
  page.locator(selector).evaluateAll((cells) =>
    cells.map((cell) => {
      const { document } = globalThis as unknown as InPage;
      const text = (cell as { textContent: string | null }).textContent ?? '';
      const originLength = text.indexOf('/', text.indexOf('://') + 3);
      const walker = document.createTreeWalker(cell, 4 /* NodeFilter.SHOW_TEXT */);
      const tops = new Set<number>();
      let seen = 0;
      for (let node = walker.nextNode(); node && seen < originLength; node = walker.nextNode()) {
        for (let i = 0; i < node.data.length && seen < originLength; i += 1, seen += 1) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rect = range.getClientRects()[0];
          if (rect) tops.add(Math.round(rect.top));
        }
      }
      return tops.size;
    }),
  );

/**
 * The slugs people know (issue 38): a link's aliases on the rows of My links and All links, its analytics page
 * named by its title or first alias, and short URLs that never break inside their host. SQLite only, like the
 * other browser tests (dashboard-flow.test.ts); `ferry links list` shows aliases too (test/cli/links.test.ts).
 */
describe.skipIf(missing.chromium !== null)(
  unless(missing.chromium, 'the dashboard in Chromium: slugs people know'),
  () => {
    let d: Dashboard;
    beforeAll(async () => {
      d = await startDashboard();
    });
    afterAll(async () => d?.close());

    it('when links have aliases and titles, then the rows show the aliases, analytics are titled by title or first alias, and no host is split', async () => {
      const u = await createUser(d.t, { status: 'active' });
      const long = `${d.landingUrl}?${'utm_campaign=spring-sale-for-every-customer-on-the-list&'.repeat(4)}x=1`;
      const make = async (payload: Record<string, unknown>) => {
        const res = await d.t.request({
          method: 'POST',
          url: '/api/v1/links',
          token: u.token,
          payload: { original_url: long, tags: ['spring', 'newsletter', 'q2'], ...payload },
        });
        expect(res.status, res.text).toBe(201);
        return res.body as { short_code: string; short_url: string };
      };
      const plain = await make({});
      const titled = await make({
        title: 'Spring campaign for every customer on the newsletter list',
        aliases: ['spring'],
      });
      const slugged = await make({ aliases: ['summer-sale-2024', 'ss24'] });

      const { page, watch } = await d.open({ width: 1280, height: 900 });
      await d.signIn(page, u.username, u.password);
      const row = (code: string) =>
        page.locator('.links-table tbody tr').filter({ has: page.getByRole('link', { name: `Edit ${code}` }) });
      await row(slugged.short_code).waitFor();
      await expect(
        row(slugged.short_code)
          .getByRole('list', { name: `Aliases of ${slugged.short_code}` })
          .locator('li')
          .allTextContents(),
      ).resolves.toEqual(['/summer-sale-2024', '/ss24']);
      await expect(row(plain.short_code).getByRole('list').count()).resolves.toBe(0);
      expect(await originLines(page, '.links-table td[data-label="Short URL"]')).toEqual([1, 1, 1]);
      await d.shot(page, 'links-aliases-1280');

      // Named as people know them: the title, the first alias, the code when there is neither.
      for (const [code, name] of [
        [titled.short_code, 'Spring campaign for every customer on the newsletter list'],
        [slugged.short_code, 'summer-sale-2024'],
        [plain.short_code, plain.short_code],
      ]) {
        await row(code!)
          .getByRole('link', { name: `Analytics of ${code}` })
          .click();
        await page.getByRole('heading', { level: 1, name: `Analytics of ${name}` }).waitFor();
        await expect(page.title()).resolves.toBe(`Analytics of ${name} · Ferry`);
        await page.goBack();
      }

      // At phone width the rows are cards: nothing scrolls sideways, and hosts stay whole.
      await page.setViewportSize({ width: 375, height: 800 });
      await row(slugged.short_code).waitFor();
      expect(await horizontalOverflow(page)).toBe(0);
      expect(await originLines(page, '.links-table td[data-label="Short URL"]')).toEqual([1, 1, 1]);
      expect(await watch.settled()).toEqual([]);

      // The admin's All links shows the same aliases.
      const admin = await d.open({ width: 1280, height: 900 });
      await d.signIn(admin.page, ADMIN.username, ADMIN.password);
      await admin.page.goto(`${d.origin}/app/all-links?owner=${u.id}`);
      const adminRow = admin.page.locator(`.all-links-table tbody tr[data-code="${slugged.short_code}"]`);
      await adminRow.waitFor();
      await expect(
        adminRow
          .getByRole('list', { name: `Aliases of ${slugged.short_code}` })
          .locator('li')
          .allTextContents(),
      ).resolves.toEqual(['/summer-sale-2024', '/ss24']);
      expect(await originLines(admin.page, '.all-links-table td[data-label="Short URL"]')).toEqual([1, 1, 1]);
      expect(await admin.watch.settled()).toEqual([]);
    });
  },
);
