import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing, sessionToken } from '../helpers/browser.js';
import { uniqueName } from '../helpers/factories.js';
import { ADMIN, startDashboard, type Dashboard } from './dashboard-fixture.js';

/**
 * Issue 17's flow in a real browser (Chromium), against a real app on a free port with the web app built as
 * `npm run build` builds it. SQLite only: the dashboard sees nothing but the HTTP contract, which every API
 * test already checks on both engines (and the PostgreSQL + Redis run); a second browser run would test the
 * same dashboard code again at twice the cost of the slowest suite.
 */
const USER_PASSWORD = 'correct-horse-battery';
/** A browser that is not headless by its User-Agent: bots may be counted apart from people. */
const VISITOR_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

// Without Chromium these are skipped; global-setup prints the one line saying why.
describe.skipIf(chromiumMissing() !== null)('the dashboard in Chromium: the main flow', () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  it('when the web app is built, then the build prints the gzipped JavaScript of the first load, within the 150 kB budget', () => {
    const line = /bundle budget: first load ([\d.]+) kB of gzipped JavaScript, budget 150\.0 kB: within/.exec(d.buildOutput);
    expect(line, d.buildOutput).not.toBeNull();
    expect(Number(line![1])).toBeLessThanOrEqual(150);
    // The analytics screen and its chart library are a chunk of their own, loaded on demand.
    expect(d.buildOutput).toMatch(/on demand +[\d.]+ kB {2}assets\/LinkStatsPage-/);
  });

  it('when a user signs up, is activated by the admin, creates a link visited three times and signs out, then each step shows in the browser and the token is revoked', async () => {
    const { t, origin } = d;
    const username = uniqueName('e2e');
    const code = `e${Math.random().toString(36).slice(2, 8)}`;
    const user = await d.open();
    const admin = await d.open();

    // Sign up: / leads to /app, which asks to sign in; the new account is told it awaits activation.
    await user.page.goto(`${origin}/`);
    await user.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await d.shot(user.page, 'sign-in');
    await user.page.getByRole('link', { name: 'Sign up' }).click();
    await user.page.getByLabel('Username').fill(username);
    await user.page.getByLabel('Email').fill(`${username}@example.com`);
    await user.page.getByLabel('Password').fill(USER_PASSWORD);
    await d.shot(user.page, 'sign-up');
    await user.page.getByRole('button', { name: 'Sign up' }).click();
    await user.page.getByText('awaits activation by an admin').waitFor();
    // Signed in while pending, every screen says so.
    await user.page.getByLabel('Username').fill(username);
    await user.page.getByLabel('Password').fill(USER_PASSWORD);
    await user.page.getByRole('button', { name: 'Sign in' }).click();
    await user.page.getByText('Your account awaits activation by an admin.').waitFor();
    await user.page.getByRole('button', { name: 'Sign out' }).click();
    await user.page.getByText('You have signed out.').waitFor();

    // The admin (ADMIN_USERNAME) activates the account on the Users screen, filtered to pending accounts.
    await d.signIn(admin.page, ADMIN.username, ADMIN.password);
    await admin.page.getByRole('link', { name: 'Users' }).click();
    await admin.page.getByLabel('Status').selectOption('pending');
    await admin.page.waitForURL(/status=pending/);
    const row = admin.page.getByRole('row').filter({ hasText: username });
    await row.waitFor();
    await d.shot(admin.page, 'users');
    await admin.page.getByRole('button', { name: `Activate ${username}` }).click();
    await row.waitFor({ state: 'detached' });
    const active = await t.request({ url: '/api/v1/users?status=active&limit=100', token: (await sessionToken(admin.page))! });
    expect(active.body.data.map((u: { username: string }) => u.username)).toContain(username);

    // Signed in again: no notice, no links yet; a link with a custom code, its short URL shown as text.
    await d.signIn(user.page, username, USER_PASSWORD);
    await expect(user.page.getByText('awaits activation').count()).resolves.toBe(0);
    await user.page.getByText('You have no links yet.').waitFor();
    await user.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New link' }).click();
    await user.page.getByLabel('Destination URL').fill(d.landingUrl);
    await user.page.getByLabel('Custom code (optional)').fill(code);
    await d.shot(user.page, 'create-link');
    await user.page.getByRole('button', { name: 'Create link' }).click();
    const shortUrl = `${origin}/${code}`;
    await expect(user.page.getByLabel('Short URL').textContent()).resolves.toBe(shortUrl);
    await d.shot(user.page, 'link-created');

    // Three visits from another browser profile, each redirected to the destination.
    const visitor = await d.browser.newContext({ userAgent: VISITOR_UA });
    const visit = await visitor.newPage();
    for (let i = 0; i < 3; i++) {
      await visit.goto(shortUrl);
      expect(visit.url()).toBe(d.landingUrl);
      await expect(visit.title()).resolves.toBe('Landed');
    }
    await visitor.close();
    await t.app.clickQueue.flush();

    // The analytics page: 3 clicks in the chart's data, and the view's state in the URL.
    await user.page.getByRole('link', { name: 'View analytics' }).click();
    await user.page.getByRole('heading', { name: `Analytics of ${code}` }).waitFor();
    await user.page.locator('.chart canvas').first().waitFor();
    const chartClicks = () => user.page.locator('.chart-data td[data-clicks]').evaluateAll((cells) => cells.reduce((sum, c) => sum + Number(c.getAttribute('data-clicks')), 0));
    await expect(chartClicks()).resolves.toBe(3);
    await expect(user.page.getByTestId('window-clicks').textContent()).resolves.toBe('3');
    await d.shot(user.page, 'link-analytics');
    await user.page.getByText('Chart data').click();
    await user.page.getByRole('columnheader', { name: 'Day (UTC)' }).waitFor();
    await user.page.getByLabel('Interval').selectOption('hour');
    await user.page.waitForURL(/interval=hour/);
    await user.page.getByRole('columnheader', { name: 'Hour (UTC)' }).waitFor();
    await expect(chartClicks()).resolves.toBe(3);
    // The URL is the view: opened in another tab (no session there: sessionStorage is per tab), it asks to
    // sign in, then shows the same range and interval.
    const viewUrl = user.page.url();
    const shared = await user.page.context().newPage();
    await shared.goto(viewUrl);
    await shared.getByLabel('Username').fill(username);
    await shared.getByLabel('Password').fill(USER_PASSWORD);
    await shared.getByRole('button', { name: 'Sign in' }).click();
    await shared.waitForURL(viewUrl);
    await expect(shared.getByLabel('Interval').inputValue()).resolves.toBe('hour');
    await shared.close();

    // My links: the link, its click count.
    await user.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My links' }).click();
    const linkRow = user.page.getByRole('row').filter({ hasText: shortUrl });
    await expect(linkRow.locator('td[data-label="Clicks"]').textContent()).resolves.toBe('3');
    await d.shot(user.page, 'links');

    // Sign out revokes the token on the server, and the tab forgets it.
    const token = await sessionToken(user.page);
    expect(token).toBeTruthy();
    expect((await t.request({ url: '/api/v1/users/me', token: token! })).status).toBe(200);
    await user.page.getByRole('button', { name: 'Sign out' }).click();
    await user.page.getByText('You have signed out.').waitFor();
    await expect(sessionToken(user.page)).resolves.toBeNull();
    expect((await t.request({ url: '/api/v1/users/me', token: token! })).status).toBe(401);

    expect(await user.watch.settled()).toEqual([]);
    expect(await admin.watch.settled()).toEqual([]);
  }, 180_000);
});
