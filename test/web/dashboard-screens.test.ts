import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { horizontalOverflow, sessionToken, unlabelledControls } from '../helpers/browser.js';
import { createUser } from '../helpers/factories.js';
import { ADMIN, startDashboard, type Dashboard } from './dashboard-fixture.js';
import { missing, unless } from '../helpers/skip.js';

/** The dashboard's screens in Chromium beyond the main flow: errors, states, phone width, labels, CSP. */
// Without Chromium these are skipped; global-setup prints the one line saying why.
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: screens'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  /** The text of the error message tied to a control (aria-describedby → its `-error` element). */
  async function errorBeside(page: Page, label: string): Promise<string | null> {
    const control = page.getByLabel(label, { exact: true });
    await expect(control.getAttribute('aria-invalid')).resolves.toBe('true');
    const ids = ((await control.getAttribute('aria-describedby')) ?? '')
      .split(' ')
      .filter((id) => id.endsWith('-error'));
    expect(ids).toHaveLength(1);
    return page.locator(`[id="${ids[0]}"]`).textContent();
  }

  it('when the API refuses the link form, then its messages stand beside their fields and no link is made', async () => {
    const { page, watch } = await d.open();
    await d.signIn(page, ADMIN.username, ADMIN.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New link' }).click();
    await page.getByLabel('Destination URL').fill('ftp://example.com/file');
    await page.getByLabel('Custom code (optional)').fill('app');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByRole('alert').first().waitFor();

    // The same body sent by the test gives the messages the page must show.
    const token = (await sessionToken(page))!;
    const refused = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token,
      payload: { original_url: 'ftp://example.com/file', short_code: 'app' },
    });
    expect(refused.status).toBe(400);
    const byField = Object.fromEntries(
      (refused.body.error.details as Array<{ field: string; message: string }>).map((x) => [x.field, x.message]),
    );
    await expect(errorBeside(page, 'Destination URL')).resolves.toBe(byField.original_url);
    await expect(errorBeside(page, 'Custom code (optional)')).resolves.toBe(byField.short_code);
    // Above the form, a pointer to the marked fields instead of the envelope's "Request body is invalid".
    expect(refused.body.error.message).toBe('Request body is invalid');
    await expect(page.locator('.form-error').textContent()).resolves.toBe('Please correct the 2 fields marked below.');
    // The first field to correct has the focus.
    await expect(page.locator(':focus').getAttribute('name')).resolves.toBe('original_url');
    await d.shot(page, 'create-link-errors');

    // Corrected, the same form goes through; the error marks are gone.
    await page.getByLabel('Destination URL').fill(d.landingUrl);
    await page.getByLabel('Custom code (optional)').fill('');
    await page.getByRole('button', { name: 'Create link' }).click();
    await expect(page.getByLabel('Short URL').textContent()).resolves.toMatch(
      new RegExp(`^${d.origin}/[0-9a-zA-Z]{8}$`),
    );
    expect(await watch.settled()).toEqual([]);
  });

  it('when the token stops working (revoked elsewhere), then the next call leads to sign in, and signing in returns to that view', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const link = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      payload: { original_url: d.landingUrl },
    });
    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.getByRole('link', { name: `Analytics of ${link.body.short_code}` }).click();
    await page.locator('.chart canvas').first().waitFor();
    const token = (await sessionToken(page))!;
    expect((await d.t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token })).status).toBe(204);

    // The next call (the stats for another interval) is a 401: back to sign in, remembering the view.
    await page.getByLabel('Interval').selectOption('hour');
    await page.getByText('Your session has ended. Sign in again to continue.').waitFor();
    const view = `/app/links/${link.body.short_code}/stats?interval=hour`;
    expect(new URL(page.url()).searchParams.get('next')).toBe(view);
    await expect(sessionToken(page)).resolves.toBeNull();
    await page.getByLabel('Username').fill(u.username);
    await page.getByLabel('Password').fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${d.origin}${view}`);
    await expect(page.getByLabel('Interval').inputValue()).resolves.toBe('hour');
    expect(await watch.settled()).toEqual([]);
  });

  it("when the API is slow, fails or refuses, then each screen says so: loading, an error with a retry, the API's reason", async () => {
    const u = await createUser(d.t, { status: 'active' });
    const { page } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New link' }).click();

    // Slow: the list's loading state shows until the answer arrives.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/v1/users/*/links*', async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My links' }).click();
    await page.getByText('Loading your links…').waitFor();
    release();
    await page.getByText('You have no links yet.').waitFor();
    await page.unrouteAll();

    // Unreachable: an error that says so, and Try again works once the server answers again.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New link' }).click();
    await page.route('**/api/v1/users/*/links*', (route) => route.abort('connectionrefused'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My links' }).click();
    await page.getByText(/^Cannot reach the server/).waitFor();
    await d.shot(page, 'links-error');
    await page.unrouteAll();
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByText('You have no links yet.').waitFor();

    // A reload while the server cannot be reached keeps the session and offers to try again.
    await page.route('**/api/v1/users/me', (route) => route.abort('connectionrefused'));
    await page.reload();
    await page.getByText(/^Cannot reach the server/).waitFor();
    await page.unrouteAll();
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByText('You have no links yet.').waitFor();

    // Refused: an unknown link's analytics, and the users screen for a non-admin, show the API's reason.
    await page.goto(`${d.origin}/app/links/zzzzzzzz/stats`);
    const missing = await d.t.request({ url: '/api/v1/links/zzzzzzzz', token: (await sessionToken(page))! });
    await page.getByRole('alert').getByText(missing.body.error.message).waitFor();
    await page.goto(`${d.origin}/app/users`);
    const forbidden = await d.t.request({ url: '/api/v1/users', token: (await sessionToken(page))! });
    expect(forbidden.status).toBe(403);
    await page.getByRole('alert').getByText(forbidden.body.error.message).waitFor();
    await expect(
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).count(),
    ).resolves.toBe(0);
  });

  it('when every screen is shown at phone width (375 px), then nothing scrolls sideways and every control has an accessible name', async () => {
    const { page, watch } = await d.open({ width: 375, height: 740 });
    const check = async (name: string) => {
      expect(await horizontalOverflow(page), name).toBeLessThanOrEqual(0);
      expect(await unlabelledControls(page), name).toEqual([]);
      await d.shot(page, `phone-${name}`);
    };
    await page.goto(`${d.origin}/app/sign-in`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await check('sign-in');
    await page.goto(`${d.origin}/app/sign-up`);
    await page.getByRole('heading', { name: 'Sign up' }).waitFor();
    await check('sign-up');
    await d.signIn(page, ADMIN.username, ADMIN.password);
    const token = (await sessionToken(page))!;
    const link = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token,
      payload: { original_url: `${d.landingUrl}?a-rather-long=query&that=might&push=the&layout=sideways` },
    });
    expect(link.status).toBe(201);

    await page.goto(`${d.origin}/app/links`);
    await page.getByRole('row').filter({ hasText: link.body.short_code }).waitFor();
    await check('links');
    await page.goto(`${d.origin}/app/links/new`);
    await page.getByLabel('Destination URL').waitFor();
    await check('create-link');
    await page.goto(`${d.origin}/app/links/${link.body.short_code}/stats?period=custom&from=2026-01-01&to=2026-01-31`);
    await page.locator('.chart canvas').first().waitFor();
    await page.getByLabel('From', { exact: true }).waitFor();
    await check('link-analytics');
    await page.goto(`${d.origin}/app/users`);
    await page.getByRole('row').filter({ hasText: ADMIN.username }).waitFor();
    await check('users');
    await page.goto(`${d.origin}/app/all-links`);
    await page.locator(`.all-links-table tr[data-code="${link.body.short_code}"]`).waitFor();
    await page.getByRole('button', { name: `Disable ${link.body.short_code}` }).click();
    await page.getByLabel('Reason (optional)').waitFor();
    await check('all-links');
    await page.goto(`${d.origin}/app/links/${link.body.short_code}/edit`);
    await page.getByRole('button', { name: 'Save changes' }).waitFor();
    await check('edit-link');
    await page.goto(`${d.origin}/app/api-keys`);
    await page.getByLabel('Key name').fill('phone key');
    await page.getByRole('checkbox', { name: /links:read/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('row').filter({ hasText: 'phone key' }).waitFor();
    await check('api-keys');
    // A long host name: its verification record and URL are wider than the phone.
    const hostname = `a-rather-long-name-for-a-shop-${Date.now().toString(36)}.example.test`;
    expect((await d.t.request({ method: 'POST', url: '/api/v1/domains', token, payload: { hostname } })).status).toBe(
      201,
    );
    await page.goto(`${d.origin}/app/domains`);
    await page.getByRole('region', { name: hostname }).getByText(`_ferry.${hostname}`).waitFor();
    await check('domains');
    await page.goto(`${d.origin}/app/account`);
    await page.getByRole('heading', { name: 'Account overview' }).waitFor();
    await page.locator('.stats, .state-error').first().waitFor();
    await check('account');
    await page.goto(`${d.origin}/app/no-such-screen`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await check('not-found');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await check('sign-in');
    expect(await watch.settled()).toEqual([]);
  });

  it('when a script on the dashboard turns a string into code or HTML, then the browser refuses it (CSP with Trusted Types)', async () => {
    const { page, watch } = await d.open();
    await page.goto(`${d.origin}/app/sign-in`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // (eval itself cannot be tried from here: the DevTools protocol that runs this function is exempt from
    // the CSP's eval rule. The header test checks that the policy has no 'unsafe-eval'.)
    const outcome = await page.evaluate(async () => {
      interface El {
        textContent: string;
        src: string;
        setAttribute(n: string, v: string): void;
        click(): void;
      }
      const g = globalThis as unknown as {
        setTimeout(code: string, ms: number): void;
        document: {
          body: { insertAdjacentHTML(where: string, html: string): void };
          createElement(tag: string): El;
          head: { append(node: El): void };
        };
        injected?: number;
      };
      const attempt = (f: () => void) => {
        try {
          f();
          return 'ran';
        } catch (err) {
          return (err as Error).name;
        }
      };
      const result = {
        timerString: attempt(() => g.setTimeout('globalThis.injected = 1', 0)),
        handlerAttribute: attempt(() => {
          const div = g.document.createElement('div');
          div.setAttribute('onclick', 'globalThis.injected = 2');
          div.click();
        }),
        inlineScript: attempt(() => {
          const s = g.document.createElement('script');
          s.textContent = 'globalThis.injected = 3';
          g.document.head.append(s);
        }),
        dataScript: attempt(() => {
          const s = g.document.createElement('script');
          s.src = 'data:text/javascript,globalThis.injected=4';
          g.document.head.append(s);
        }),
        html: attempt(() =>
          g.document.body.insertAdjacentHTML('beforeend', '<img src=x onerror="globalThis.injected = 5">'),
        ),
        injected: null as number | null,
      };
      await new Promise((resolve) => globalThis.setTimeout(resolve, 100));
      result.injected = g.injected ?? null;
      return result;
    });
    expect(outcome).toEqual({
      timerString: 'TypeError',
      handlerAttribute: 'TypeError',
      inlineScript: 'TypeError',
      dataScript: 'TypeError',
      html: 'TypeError',
      injected: null,
    });
    // The browser reported each refusal, and the watch saw them (so a violation anywhere else fails its test).
    expect((await watch.settled()).filter((p) => p.includes("requires 'Trusted"))).toHaveLength(5);
  });
});
