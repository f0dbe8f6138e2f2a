import type { Page } from 'playwright-core';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBeside, sessionToken } from '../helpers/browser.js';
import { createUser } from '../helpers/factories.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';
import { missing, unless } from '../helpers/skip.js';

// jsqr is CommonJS: its function is the default export under Node's loader, `.default` under the type check.
type JsQr = typeof jsQRModule.default;
const jsQR = ((jsQRModule as unknown as { default?: JsQr }).default ?? jsQRModule) as unknown as JsQr;

/**
 * Link management and API keys in Chromium (SPEC §13, §14, §16): the list's search, tag filter and sort; QR
 * codes; the API's messages beside the new fields; an edit refused as stale (412); the key form's messages.
 * SQLite only, like the other browser tests (see dashboard-flow.test.ts).
 */
describe.skipIf(missing.chromium !== null)(
  unless(missing.chromium, 'the dashboard in Chromium: links and keys'),
  () => {
    let d: Dashboard;
    beforeAll(async () => {
      d = await startDashboard();
    });
    afterAll(async () => d?.close());

    /** The short codes of the list's rows, in order. */
    const codesShown = (page: Page) =>
      page
        .locator('.links-table tbody tr .short-url')
        .evaluateAll((cells) => cells.map((c) => (c.textContent ?? '').split('/').pop()));

    it("when links are searched, filtered by tag and sorted, then the list follows the URL and each link's QR code reads back as its short URL", async () => {
      const u = await createUser(d.t, { status: 'active' });
      const make = async (payload: Record<string, unknown>) =>
        (await d.t.request({ method: 'POST', url: '/api/v1/links', token: u.token, payload })).body as {
          short_code: string;
          short_url: string;
        };
      const alpha = await make({ original_url: `${d.landingUrl}?campaign=alpha`, tags: ['promo', 'q4'] });
      const beta = await make({
        original_url: `${d.landingUrl}?campaign=beta`,
        tags: ['promo'],
        max_visits: 5,
        password: 'visitor-password',
      });
      const gamma = await make({ original_url: `${d.landingUrl}?campaign=gamma` });
      // gamma gets two visits, alpha one: "Most clicks" puts gamma first.
      for (const code of [gamma.short_code, gamma.short_code, alpha.short_code])
        await fetch(`${d.origin}/${code}`, {
          redirect: 'manual',
          headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0.0.0 Safari/537.36' },
        });
      await d.t.app.clickQueue.flush();

      const { page, watch } = await d.open();
      await d.signIn(page, u.username, u.password);
      await page.getByRole('row').filter({ hasText: gamma.short_url }).waitFor();
      await expect(codesShown(page)).resolves.toEqual([gamma.short_code, beta.short_code, alpha.short_code]);
      // What sets a link apart is shown with it.
      const betaRow = page.getByRole('row').filter({ hasText: beta.short_url });
      await expect(betaRow.textContent()).resolves.toMatch(/password.*max 5 visits/);

      await page.getByLabel('Sort').selectOption('clicks');
      await page.waitForURL(/sort=clicks/);
      await expect.poll(() => codesShown(page)).toEqual([gamma.short_code, alpha.short_code, beta.short_code]);

      await page.getByLabel('Search', { exact: true }).fill('campaign=be');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/q=campaign%3Dbe/);
      await expect.poll(() => codesShown(page)).toEqual([beta.short_code]);
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await expect.poll(() => codesShown(page)).toHaveLength(3);

      // A tag on a row filters the list by it; the URL says so, and reopening it gives the same list.
      await page
        .getByRole('row')
        .filter({ hasText: alpha.short_url })
        .getByRole('link', { name: 'Links tagged promo' })
        .click();
      await page.waitForURL(/tag=promo/);
      await expect.poll(() => codesShown(page)).toEqual([alpha.short_code, beta.short_code]);
      await expect(page.getByLabel('Tag', { exact: true }).inputValue()).resolves.toBe('promo');
      await page.reload();
      await expect.poll(() => codesShown(page)).toEqual([alpha.short_code, beta.short_code]);
      await d.shot(page, 'links-filtered');

      // A malformed tag: the API's message, in plain words, beside the Tag field, nothing listed.
      await page.getByLabel('Tag', { exact: true }).fill('Not A Tag!');
      await page.getByRole('button', { name: 'Apply' }).click();
      const refused = await d.t.request({
        url: `/api/v1/users/me/links?tag=${encodeURIComponent('Not A Tag!')}`,
        token: u.token,
      });
      expect(refused.status).toBe(400);
      const tagDetail = (refused.body.error.details as Array<{ field: string; message: string }>).find(
        (x) => x.field === 'tag',
      )!;
      expect(tagDetail.message).toMatch(/^must match pattern/);
      await expect(errorBeside(page, 'Tag')).resolves.toBe('may contain only letters, digits and hyphens');
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await expect.poll(() => codesShown(page)).toHaveLength(3);

      // No match: said so, with the filter still shown.
      await page.getByLabel('Search', { exact: true }).fill('nothing-like-this');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText('No link matches this search.').waitFor();
      await page.getByRole('button', { name: 'Clear filters' }).click();

      // QR: fetched with the token, shown from a blob: URL (CSP img-src), decoded back to the short URL.
      await page.getByRole('button', { name: `QR code of ${alpha.short_code}` }).click();
      const img = page.getByRole('img', { name: `QR code of ${alpha.short_url}` });
      await img.waitFor();
      await expect(img.getAttribute('src')).resolves.toMatch(/^blob:/);
      await expect.poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(256);
      const png = PNG.sync.read(await img.screenshot());
      expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(alpha.short_url);
      await d.shot(page, 'links-qr');
      await page.getByRole('button', { name: `QR code of ${alpha.short_code}` }).click();
      await expect(img.count()).resolves.toBe(0);
      expect(await watch.settled()).toEqual([]);
    });

    it("when the link form gets a bad max visits, tags or password, then the API's messages stand beside those fields in plain words; corrected, the link has them all", async () => {
      const u = await createUser(d.t, { status: 'active' });
      const { page, watch } = await d.open();
      await d.signIn(page, u.username, u.password);
      await page.goto(`${d.origin}/app/links/new`);
      await page.getByLabel('Destination URL').fill(d.landingUrl);
      await page.getByLabel('Max visits (optional)').fill('0');
      await page.getByLabel('Password (optional)').fill('short');
      await page.getByLabel('Tags (optional)').fill('good, Bad Tag!');
      await page.getByRole('button', { name: 'Create link' }).click();
      await page.getByRole('alert').first().waitFor();

      const refused = await d.t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: u.token,
        payload: { original_url: d.landingUrl, max_visits: 0, password: 'short', tags: ['good', 'bad', 'tag!'] },
      });
      expect(refused.status).toBe(400);
      // The API's details, as its validator words them; the page says the same in plain words at each field.
      expect(refused.body.error.details).toEqual([
        { field: 'max_visits', message: 'must be >= 1, or null' },
        { field: 'tags.2', message: 'must match pattern "^[a-zA-Z0-9-]{1,32}$"' },
        { field: 'password', message: 'must NOT have fewer than 8 characters, or null' },
      ]);
      await expect(page.locator('.form-error').textContent()).resolves.toBe(
        'Please correct the 3 fields marked below.',
      );
      await expect(errorBeside(page, 'Max visits (optional)')).resolves.toBe('must be at least 1, or left empty');
      await expect(errorBeside(page, 'Password (optional)')).resolves.toBe(
        'must be at least 8 characters long, or left empty',
      );
      // An item's message names the item, counted from 1.
      await expect(errorBeside(page, 'Tags (optional)')).resolves.toBe(
        'tag 3: may contain only letters, digits and hyphens',
      );
      await d.shot(page, 'create-link-errors-phase2');
      expect((await d.t.request({ url: '/api/v1/users/me/links', token: u.token })).body.data).toEqual([]);

      await page.getByLabel('Max visits (optional)').fill('3');
      await page.getByLabel('Password (optional)').fill('visitor-password');
      await page.getByLabel('Tags (optional)').fill('good, launch');
      const alias = `launch-day-${Date.now().toString(36)}`;
      await page.getByLabel('Aliases (optional)').fill(`${alias}, Launch_${Date.now().toString(36)}`);
      await page.getByLabel(/Forward the visit's query string/).check();
      await page.getByRole('button', { name: 'Create link' }).click();
      const shortUrl = (await page.getByLabel('Short URL').textContent())!;
      const code = shortUrl.split('/').pop()!;
      const link = (await d.t.request({ url: `/api/v1/links/${code}`, token: u.token })).body;
      expect(link).toMatchObject({
        original_url: d.landingUrl,
        max_visits: 3,
        has_password: true,
        tags: ['good', 'launch'],
        forward_query: true,
        aliases: [alias, expect.stringMatching(/^Launch_/)],
      });
      expect(await watch.settled()).toEqual([]);
    });

    it('when the link changed elsewhere after the edit screen read it, then saving is refused (412) and explained, and after a reload the edit goes through', async () => {
      const u = await createUser(d.t, { status: 'active' });
      const created = await d.t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: u.token,
        payload: { original_url: d.landingUrl, tags: ['one'], password: 'visitor-password' },
      });
      const code = created.body.short_code as string;
      const { page, watch } = await d.open();
      await d.signIn(page, u.username, u.password);
      await page.goto(`${d.origin}/app/links/${code}/edit`);
      await expect(page.getByLabel('Tags (optional)').inputValue()).resolves.toBe('one');

      // Someone else changes it meanwhile.
      expect(
        (
          await d.t.request({
            method: 'PATCH',
            url: `/api/v1/links/${code}`,
            token: u.token,
            payload: { tags: ['two'] },
          })
        ).status,
      ).toBe(200);
      await page.getByLabel('Destination URL').fill(`${d.landingUrl}?mine=1`);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('This link was changed elsewhere since you opened it').waitFor();
      await d.shot(page, 'edit-link-stale');
      expect((await d.t.request({ url: `/api/v1/links/${code}`, token: u.token })).body).toMatchObject({
        original_url: d.landingUrl,
        tags: ['two'],
      });

      await page.getByRole('button', { name: 'Reload the link' }).click();
      await expect.poll(() => page.getByLabel('Tags (optional)').inputValue()).toBe('two');
      await page.getByLabel('Destination URL').fill(`${d.landingUrl}?mine=1`);
      await page.getByLabel('Max visits (optional)').fill('9');
      await page.getByLabel('Remove the password').check();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Changes saved.').waitFor();
      expect((await d.t.request({ url: `/api/v1/links/${code}`, token: u.token })).body).toMatchObject({
        original_url: `${d.landingUrl}?mine=1`,
        tags: ['two'],
        max_visits: 9,
        has_password: false,
      });
      // A second save goes with the new ETag (from the PATCH's answer), not the stale one.
      await page.getByLabel('Max visits (optional)').fill('');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await expect
        .poll(async () => (await d.t.request({ url: `/api/v1/links/${code}`, token: u.token })).body.max_visits)
        .toBeNull();
      expect(await watch.settled()).toEqual([]);
    });

    it("when a link's preview is filled in on the edit screen, then the card shows it as typed, a bad image URL is refused beside its field, and the saved preview is what unfurlers get", async () => {
      const u = await createUser(d.t, { status: 'active' });
      const created = await d.t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: u.token,
        payload: { original_url: d.landingUrl },
      });
      const code = created.body.short_code as string;
      const { page, watch } = await d.open();
      await d.signIn(page, u.username, u.password);
      await page.goto(`${d.origin}/app/links/${code}/edit`);
      const card = page.getByRole('figure', { name: 'Card preview' });
      await page.getByLabel('Preview title').fill('Spring <sale>');
      await page.getByLabel('Preview description').fill('Everything 20% off');
      await page.getByLabel('Preview image URL').fill('http://cdn.example.com/card.png');
      await expect(card.getByText('Spring <sale>').count()).resolves.toBe(1);
      await expect(card.getByText('Everything 20% off').count()).resolves.toBe(1);
      await expect(card.getByRole('img', { name: 'Image from cdn.example.com' }).count()).resolves.toBe(1);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await expect(errorBeside(page, 'Preview image URL')).resolves.toMatch(/https/);
      expect((await d.t.request({ url: `/api/v1/links/${code}`, token: u.token })).body.preview).toBeNull();

      await page.getByLabel('Preview image URL').fill('https://cdn.example.com/card.png');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Changes saved.').waitFor();
      await d.shot(page, 'edit-link-preview');
      expect((await d.t.request({ url: `/api/v1/links/${code}`, token: u.token })).body.preview).toEqual({
        title: 'Spring <sale>',
        description: 'Everything 20% off',
        image_url: 'https://cdn.example.com/card.png',
      });
      const unfurled = await fetch(`${d.origin}/${code}`, {
        redirect: 'manual',
        headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
      });
      expect(unfurled.status).toBe(200);
      expect(await unfurled.text()).toContain('<meta property="og:title" content="Spring &lt;sale&gt;">');

      // Emptying every field removes the preview.
      for (const label of ['Preview title', 'Preview description', 'Preview image URL'])
        await page.getByLabel(label).fill('');
      await expect(card.count()).resolves.toBe(0);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await expect
        .poll(async () => (await d.t.request({ url: `/api/v1/links/${code}`, token: u.token })).body.preview)
        .toBeNull();
      expect(await watch.settled()).toEqual([]);
    });

    it('when an API key is asked for without scopes or a name, then the messages stand beside them in plain words and no key is made', async () => {
      const u = await createUser(d.t, { status: 'active' });
      const { page, watch } = await d.open();
      await d.signIn(page, u.username, u.password);
      await page.goto(`${d.origin}/app/api-keys`);
      await page.getByText('You have no API keys yet.').waitFor();
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('alert').first().waitFor();
      const refused = await d.t.request({
        method: 'POST',
        url: '/api/v1/users/me/api-keys',
        token: u.token,
        payload: { name: '', scopes: [] },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details).toEqual([
        { field: 'name', message: 'must NOT have fewer than 1 characters' },
        { field: 'scopes', message: 'must NOT have fewer than 1 items' },
      ]);
      await expect(errorBeside(page, 'Key name')).resolves.toBe('is required');
      await expect(page.locator('#scopes-error').textContent()).resolves.toBe('choose at least one');
      await expect(page.locator('.form-error').textContent()).resolves.toBe(
        'Please correct the 2 fields marked below.',
      );
      await d.shot(page, 'api-keys-errors');
      expect(
        (await d.t.request({ url: '/api/v1/users/me/api-keys', token: (await sessionToken(page))! })).body.data,
      ).toEqual([]);
      expect(await watch.settled()).toEqual([]);
    });
  },
);
