import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLink, createUser, uniqueName, visit } from '../helpers/factories.js';
import { ADMIN, startDashboard, type Dashboard } from './dashboard-fixture.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * The admin's All links screen (SPEC §18, issue 28): search, owner and status filters, disabling a link with a
 * reason and enabling it again, through GET /links and PATCH /links/{code}; not offered to other users. SQLite
 * only, like the other browser tests (see dashboard-flow.test.ts); the endpoints are tested on both engines in
 * test/modules/links.
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: all links'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  /** The short codes of the list's rows, in order. */
  const codesShown = (page: Page) =>
    page.locator('.all-links-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-code')));
  const row = (page: Page, code: string) => page.locator(`.all-links-table tbody tr[data-code="${code}"]`);

  it('when an admin searches all links, filters them by owner and status, disables one with a reason and enables it again, then the list and the redirect follow', async () => {
    const marker = uniqueName('m');
    const alice = await createUser(d.t, { status: 'active' });
    const bob = await createUser(d.t, { status: 'active' });
    const url = (what: string) => `${d.landingUrl}?${marker}=${what}`;
    const a1 = await createLink(d.t, { original_url: url('a1') }, alice.token);
    const a2 = await createLink(d.t, { original_url: url('a2') }, alice.token);
    const b1 = await createLink(d.t, { original_url: url('b1') }, bob.token);
    const anon = await createLink(d.t, { original_url: url('anon') });

    const { page, watch } = await d.open();
    await d.signIn(page, ADMIN.username, ADMIN.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'All links' }).click();
    await page.getByRole('heading', { name: 'All links' }).waitFor();

    // Search: every owner's links whose destination has the marker, newest first; the URL keeps the search.
    await page.getByLabel('Search', { exact: true }).fill(marker);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(new RegExp(`q=${marker}`));
    await expect.poll(() => codesShown(page)).toEqual([anon.short_code, b1.short_code, a2.short_code, a1.short_code]);
    await expect(row(page, anon.short_code).locator('td[data-label="Owner"]').textContent()).resolves.toBe('anonymous');
    await expect(row(page, b1.short_code).locator('td[data-label="Owner"]').textContent()).resolves.toBe(bob.username);

    // Owner: chosen by name, kept in the URL as the user's id.
    await page.getByLabel('Owner').selectOption({ label: alice.username });
    await page.waitForURL(new RegExp(`owner=${alice.id}`));
    await expect.poll(() => codesShown(page)).toEqual([a2.short_code, a1.short_code]);
    await page.getByLabel('Owner').selectOption({ label: 'Anyone' });
    await expect.poll(() => codesShown(page)).toHaveLength(4);
    // An owner's name in a row filters by them too.
    await row(page, b1.short_code)
      .getByRole('link', { name: `Links of ${bob.username}` })
      .click();
    await expect.poll(() => codesShown(page)).toEqual([b1.short_code]);
    await expect(page.getByLabel('Owner').inputValue()).resolves.toBe(String(bob.id));

    // Disable with a reason: the row says so, the API has it, a visit is refused (410 LINK_DISABLED).
    await page.getByRole('button', { name: `Disable ${b1.short_code}` }).click();
    await page.getByLabel('Reason (optional)').fill('Phishing, reported by abuse@');
    await page.getByRole('button', { name: `Confirm: disable ${b1.short_code}` }).click();
    await row(page, b1.short_code).getByText('Phishing, reported by abuse@').waitFor();
    await expect(row(page, b1.short_code).locator('td[data-label="Status"]').textContent()).resolves.toMatch(
      /^disabled/,
    );
    const stored = await d.t.request({ url: `/api/v1/links/${b1.short_code}`, token: bob.token });
    expect(stored.body).toMatchObject({ disabled: true, disabled_reason: 'Phishing, reported by abuse@' });
    const refused = await visit(d.t, b1.short_code);
    expect(refused.status).toBe(410);
    expect(refused.body.error.code).toBe('LINK_DISABLED');
    await d.shot(page, 'all-links-disabled');

    // Status: only the disabled link, whoever owns it.
    await page.getByLabel('Owner').selectOption({ label: 'Anyone' });
    await page.getByLabel('Status').selectOption('disabled');
    await page.waitForURL(/status=disabled/);
    await expect.poll(() => codesShown(page)).toEqual([b1.short_code]);
    await page.getByLabel('Status').selectOption('active');
    await expect.poll(() => codesShown(page)).toEqual([anon.short_code, a2.short_code, a1.short_code]);
    await page.getByLabel('Status').selectOption('disabled');
    await expect.poll(() => codesShown(page)).toEqual([b1.short_code]);

    // Its owner sees why on My links.
    const owner = await d.open();
    await d.signIn(owner.page, bob.username, bob.password);
    await owner.page
      .getByRole('row')
      .filter({ hasText: b1.short_code })
      .getByText('disabled by an admin: Phishing, reported by abuse@')
      .waitFor();

    // Enabled again: gone from the disabled ones, redirecting again.
    await page.getByRole('button', { name: `Enable ${b1.short_code} again` }).click();
    await page.getByText('No link matches these filters.').waitFor();
    expect((await d.t.request({ url: `/api/v1/links/${b1.short_code}`, token: bob.token })).body).toMatchObject({
      disabled: false,
      disabled_reason: null,
    });
    expect((await visit(d.t, b1.short_code)).status).toBe(302);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL((u) => !u.search.includes('status='));
    expect(await watch.settled()).toEqual([]);
    expect(await owner.watch.settled()).toEqual([]);
  });

  it('when someone who is not an admin signs in, then All links is not offered, and its address says it is for admins without asking the API', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'My links' }).waitFor();
    await expect(nav.getByRole('link', { name: 'All links' }).count()).resolves.toBe(0);
    const asked: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/v1/links') asked.push(r.method());
    });
    await page.goto(`${d.origin}/app/all-links`);
    await page.getByRole('alert').getByText('Only admins can see all links.').waitFor();
    expect(asked).toEqual([]);
    expect(await watch.settled()).toEqual([]);
  });
});
