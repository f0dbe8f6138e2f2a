import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { launchChromium } from '../../helpers/browser.js';
import { freePort } from '../../helpers/scale-out.js';
import { createUser } from '../../helpers/factories.js';
import { clickRecords, createLink } from './links.helpers.js';
import { missing, unless } from '../../helpers/skip.js';

/**
 * The password page in a real browser (Chromium): its CSP must let the form post and the 303 leave for the
 * target's origin (browsers apply form-action to that redirect), and nothing on it may fail.
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the password page in Chromium'), () => {
  let t: TestApp;
  let origin: string;
  let landing: http.Server;
  let landingUrl: string;
  let browser: Browser;
  beforeAll(async () => {
    landing = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Landed</title><p>Landed'),
    );
    landing.listen(0, '127.0.0.1');
    await once(landing, 'listening');
    landingUrl = `http://127.0.0.1:${(landing.address() as AddressInfo).port}/landing`;
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    t = await createTestApp('sqlite', { env: { PORT: String(port), PUBLIC_BASE_URL: origin } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    landing?.close();
  });

  it('when a visitor opens a protected link, then the form asks, a wrong password is said so, and the right one lands on the target with the query', async () => {
    const link = await createLink(
      t,
      { original_url: landingUrl, password: 'correct-horse-7', forward_query: true },
      (await createUser(t)).token,
    );
    const context = await browser.newContext();
    const problems: string[] = [];
    const page = await context.newPage();
    page.on('console', (msg) => {
      if (
        msg.type() === 'error' &&
        !msg.text().startsWith('Failed to load resource: the server responded with a status of 401')
      )
        problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));

    const first = await page.goto(`${origin}/${link.short_code}?utm_source=poster`);
    expect(first?.status()).toBe(401);
    expect(await page.title()).toBe('Password required');
    await page.getByLabel('Password').fill('wrong-password-1');
    await page.getByRole('button', { name: 'Open link' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/not right/);

    await page.getByLabel('Password').fill('correct-horse-7');
    await Promise.all([
      page.waitForURL(`${landingUrl}?utm_source=poster`),
      page.getByRole('button', { name: 'Open link' }).click(),
    ]);
    expect(await page.title()).toBe('Landed');
    expect(problems).toEqual([]);
    expect(await clickRecords(t, link.id)).toHaveLength(1);
    await context.close();
  });
});
