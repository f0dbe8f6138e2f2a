import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/db/audit-log.js';
import { sessionToken } from '../helpers/browser.js';
import { createUser } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';
import { ADMIN, startDashboard, type Dashboard } from './dashboard-fixture.js';

/** What the audit screen's rows say: each row's action and actor, top to bottom. */
const rowsShown = (page: Page) =>
  page.locator('.audit-table tbody tr').evaluateAll((rows) =>
    rows.map((r) => {
      const row = r as unknown as {
        getAttribute(n: string): string | null;
        children: ArrayLike<{ textContent: string | null }>;
      };
      return { action: row.getAttribute('data-action'), actor: row.children[1]!.textContent };
    }),
  );

/**
 * The admins' Audit screen (SPEC §23) in Chromium: what was done in the test (sign-ins, an API key made on its
 * screen) is there, newest first; filtered by action and by actor (typed, or clicked on a row), each in the URL;
 * older entries on the next page; a user who is no admin neither sees it nor reaches the log. SQLite only, like
 * the other browser suites (the API underneath is tested on both engines: test/modules/audit).
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: audit log'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  it('when an admin opens the audit log, then the actions done here are there, filtered by action and by actor, and older entries are on the next page', async () => {
    // Sixty older entries by the CLI (written as every action writes them), so the log is more than one page.
    const older = Array.from({ length: 60 }, (_, i) => ({
      action: 'backup.created' as const,
      actor: 'cli' as const,
      target: { type: 'backup', id: `older-${i}.tar` },
      at: d.t.clock.now() - 3_600_000 + i,
    }));
    await d.t.storage.db.transaction().execute((tx) => recordAudit(tx, ...older));

    // A user signs in and makes an API key on its screen.
    const u = await createUser(d.t, { status: 'active' });
    const user = await d.open();
    await d.signIn(user.page, u.username, u.password);
    await user.page.goto(`${d.origin}/app/api-keys`);
    await user.page.getByLabel('Key name').fill('audited key');
    await user.page.getByRole('checkbox', { name: /links:read/ }).check();
    await user.page.getByRole('button', { name: 'Create key' }).click();
    await user.page.getByRole('row').filter({ hasText: 'audited key' }).waitFor();

    const { page, watch } = await d.open();
    await d.signIn(page, ADMIN.username, ADMIN.password);
    const admin = (await d.t.request({ url: '/api/v1/users/me', token: (await sessionToken(page))! })).body as {
      id: number;
    };
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.locator('.audit-table').waitFor();
    const first = await rowsShown(page);
    expect(first).toHaveLength(50);
    expect(first[0]).toEqual({ action: 'auth.sign_in', actor: ADMIN.username });
    expect(first).toContainEqual({ action: 'api_key.created', actor: u.username });
    expect(first).toContainEqual({ action: 'auth.sign_in', actor: u.username });
    await d.shot(page, 'audit');

    // By action: only API keys made, the user's among them; in the URL.
    await page.getByLabel('Action').selectOption('api_key.created');
    await expect.poll(() => new URL(page.url()).searchParams.get('action')).toBe('api_key.created');
    await expect.poll(async () => (await rowsShown(page)).every((r) => r.action === 'api_key.created')).toBe(true);
    expect(await rowsShown(page)).toContainEqual({ action: 'api_key.created', actor: u.username });
    await page.getByRole('link', { name: 'Clear filters' }).click();

    // By actor, clicked on a row: only what the user did.
    await page
      .getByRole('link', { name: `Only what ${u.username} did` })
      .first()
      .click();
    await expect.poll(() => new URL(page.url()).searchParams.get('actor_id')).toBe(String(u.id));
    await expect
      .poll(async () => (await rowsShown(page)).map((r) => r.action).sort())
      .toEqual(['api_key.created', 'auth.sign_in', 'auth.sign_in']);
    // By actor, typed: the admin's own.
    await page.getByLabel('Actor id').fill(String(admin.id));
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(async () => (await rowsShown(page)).every((r) => r.actor === ADMIN.username)).toBe(true);
    await page.getByRole('link', { name: 'Clear filters' }).click();

    // The next page: the older entries, after the first page's last one.
    await expect.poll(async () => (await rowsShown(page)).length).toBe(50);
    await page.getByRole('link', { name: 'Older entries' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.has('cursor')).toBe(true);
    await expect.poll(async () => (await rowsShown(page)).every((r) => r.action === 'backup.created')).toBe(true);
    const second = await rowsShown(page);
    expect(second.length).toBeGreaterThan(0);
    expect(second.every((r) => r.actor === 'cli')).toBe(true);
    await page.getByRole('link', { name: 'Newest entries' }).click();
    await expect
      .poll(async () => (await rowsShown(page))[0])
      .toEqual({ action: 'auth.sign_in', actor: ADMIN.username });
    expect(await watch.settled()).toEqual([]);
    expect(await user.watch.settled()).toEqual([]);
  });

  it('when a user who is no admin opens the audit address, then it is not in their navigation, the screen says it is for admins without asking the API, and the API refuses them', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const { page, watch } = await d.open();
    const asked: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/v1/audit-log')) asked.push(r.url());
    });
    await d.signIn(page, u.username, u.password);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Webhooks' }).waitFor();
    await expect(nav.getByRole('link', { name: 'Audit' }).count()).resolves.toBe(0);
    await page.goto(`${d.origin}/app/audit`);
    await page.getByRole('alert').getByText('Only admins can see the audit log.').waitFor();
    expect(asked).toEqual([]);
    const res = await d.t.request({ url: '/api/v1/audit-log', token: u.token });
    expect(res.status).toBe(403);
    expect(await watch.settled()).toEqual([]);
  });
});
