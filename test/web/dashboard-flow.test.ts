import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionToken } from '../helpers/browser.js';
import { uniqueName } from '../helpers/factories.js';
import { ADMIN, startDashboard, type Dashboard } from './dashboard-fixture.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * The dashboard's whole flow in a real browser (Chromium), against a real app on a free port with the web app built as
 * `npm run build` builds it. SQLite only: the dashboard sees nothing but the HTTP contract, which every API
 * test already checks on both engines (and the PostgreSQL + Redis run); a second browser run would test the
 * same dashboard code again at twice the cost of the slowest suite.
 */
const USER_PASSWORD = 'correct-horse-battery';
/** A browser that is not headless by its User-Agent: bots may be counted apart from people. */
const VISITOR_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

// Without Chromium these are skipped; global-setup prints the one line saying why.
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: the main flow'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  it('when the web app is built, then the build prints the gzipped JavaScript of the first load, within the 150 kB budget', () => {
    const line = /bundle budget: first load ([\d.]+) kB of gzipped JavaScript, budget 150\.0 kB: within/.exec(
      d.buildOutput,
    );
    expect(line, d.buildOutput).not.toBeNull();
    expect(Number(line![1])).toBeLessThanOrEqual(150);
    // The analytics screen and its chart library are a chunk of their own, loaded on demand.
    expect(d.buildOutput).toMatch(/on demand +[\d.]+ kB {2}assets\/LinkStatsPage-/);
  });

  it('when a user signs up, is activated by the admin, creates a link visited three times, edits it, makes and revokes an API key and signs out, then each step shows in the browser and takes effect in the API', async () => {
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
    const active = await t.request({
      url: '/api/v1/users?status=active&limit=100',
      token: (await sessionToken(admin.page))!,
    });
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
    const chartClicks = () =>
      user.page
        .locator('.chart-data td[data-clicks]')
        .evaluateAll((cells) => cells.reduce((sum, c) => sum + Number(c.getAttribute('data-clicks')), 0));
    await expect(chartClicks()).resolves.toBe(3);
    await expect(user.page.getByTestId('window-clicks').textContent()).resolves.toBe('3');
    await d.shot(user.page, 'link-analytics');
    await expect(user.page.getByTestId('window-bots').textContent()).resolves.toBe('0');
    await user.page.getByText('Chart data').click();
    await user.page.getByRole('columnheader', { name: /^Day \(/ }).waitFor();
    await user.page.getByLabel('Interval').selectOption('hour');
    await user.page.waitForURL(/interval=hour/);
    await user.page.getByRole('columnheader', { name: /^Hour \(/ }).waitFor();
    await expect(chartClicks()).resolves.toBe(3);
    // Another time zone: the buckets follow it, the clicks are the same three.
    await user.page.getByLabel('Time zone').selectOption('Asia/Tokyo');
    await user.page.waitForURL(/tz=Asia%2FTokyo/);
    await user.page.getByRole('columnheader', { name: 'Hour (Asia/Tokyo)' }).waitFor();
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
    await expect(shared.getByLabel('Time zone').inputValue()).resolves.toBe('Asia/Tokyo');
    await shared.close();

    // My links: the link, its click count.
    await user.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My links' }).click();
    const linkRow = user.page.getByRole('row').filter({ hasText: shortUrl });
    await expect(linkRow.locator('td[data-label="People"]').textContent()).resolves.toBe('3');
    await expect(linkRow.locator('td[data-label="Bots"]').textContent()).resolves.toBe('0');
    await d.shot(user.page, 'links');

    // Edit the destination (PATCH with If-Match from the GET's ETag): the redirect follows at once.
    const edited = `${d.landingUrl}?edited=1`;
    await linkRow.getByRole('link', { name: `Edit ${code}` }).click();
    await user.page.getByRole('heading', { name: `Edit ${code}` }).waitFor();
    await expect(user.page.getByLabel('Destination URL').inputValue()).resolves.toBe(d.landingUrl);
    await user.page.getByLabel('Destination URL').fill(edited);
    await d.shot(user.page, 'edit-link');
    await user.page.getByRole('button', { name: 'Save changes' }).click();
    await user.page.getByText('Changes saved.').waitFor();
    const redirect = await fetch(shortUrl, { redirect: 'manual', headers: { 'user-agent': VISITOR_UA } });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe(edited);

    // An API key with one scope, shown once, used by the test with fetch, then revoked: 401 at once.
    await user.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await user.page.getByText('You have no API keys yet.').waitFor();
    await user.page.getByLabel('Key name').fill('e2e script');
    await user.page.getByRole('checkbox', { name: /links:read/ }).check();
    await user.page.getByRole('button', { name: 'Create key' }).click();
    const key = (await user.page.getByLabel('New API key', { exact: true }).textContent())!;
    expect(key).toMatch(/^fry_[0-9a-zA-Z]{32,}$/);
    await user.page.getByRole('row').filter({ hasText: 'e2e script' }).waitFor();
    await d.shot(user.page, 'api-keys');
    const withKey = async (url: string) => {
      const res = await fetch(`${origin}${url}`, { headers: { authorization: `Bearer ${key}` } });
      const body = await res.text();
      expect(t.contract.check('GET', url, res.status, res.headers.get('content-type') ?? undefined, body)).toEqual([]);
      return { status: res.status, body: JSON.parse(body) as { data?: Array<{ short_code: string }> } };
    };
    const listed = await withKey('/api/v1/users/me/links');
    expect(listed.status).toBe(200);
    expect(listed.body.data!.map((l) => l.short_code)).toEqual([code]);
    // Outside its scope: 403.
    expect((await withKey('/api/v1/users/me/orders')).status).toBe(403);
    await user.page.getByRole('button', { name: 'Revoke e2e script' }).click();
    await user.page.getByRole('button', { name: 'Confirm: revoke e2e script for good' }).click();
    await user.page.getByText('You have no API keys yet.').waitFor();
    expect((await withKey('/api/v1/users/me/links')).status).toBe(401);

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
