import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { horizontalOverflow } from '../helpers/browser.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { createUser } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';

/**
 * The Domains screen in Chromium (SPEC §19): add a domain, read its verification record, a refused and then
 * a passing verification (the record published on the test's loopback DNS server), the fallbacks, and the
 * domain picked on the link form with the short URL shown on it.
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: domains'), () => {
  let d: Dashboard;
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
    d = await startDashboard({ env: { DNS_SERVERS: dns.address } });
  });
  afterAll(async () => {
    await d?.close();
    await dns?.close();
  });

  it('when a user adds and verifies a domain, sets a fallback and makes a link on it, then each step shows', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const hostname = `shop-${Date.now().toString(36)}.example.test`;
    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.getByRole('link', { name: 'Domains' }).click();
    await page.getByLabel('Host name').fill(hostname);
    await page.getByRole('button', { name: 'Add domain' }).click();
    const card = page.getByRole('region', { name: hostname });
    await card.getByText(`_ferry.${hostname}`).waitFor();
    await expect(card.textContent()).resolves.toContain('Not verified yet');
    const record = await d.t.request({ url: '/api/v1/domains', token: u.token });
    const domain = record.body.data[0];

    await card.getByRole('button', { name: `Verify ${hostname}` }).click();
    await card.getByText(/Neither proof was found/).waitFor();
    dns.txt.set(domain.verification.txt_name, [domain.verification.txt_value]);
    await card.getByRole('button', { name: `Verify ${hostname}` }).click();
    await card.getByText('Verified', { exact: true }).waitFor();
    await d.shot(page, 'domains');

    await card.getByLabel('Unknown code (optional)').fill('https://example.com/nothing-here');
    await card.getByRole('button', { name: 'Save fallbacks' }).click();
    await expect
      .poll(
        async () =>
          (await d.t.request({ url: `/api/v1/domains/${domain.id}`, token: u.token })).body.not_found_redirect,
      )
      .toBe('https://example.com/nothing-here');

    await page.getByRole('link', { name: 'New link' }).click();
    await page.getByLabel('Destination URL').fill(`${d.landingUrl}?on=domain`);
    await page.getByLabel('Domain').selectOption(hostname);
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByText(new RegExp(`^http://${hostname.replace(/\./g, '\\.')}/[0-9a-zA-Z]{8}$`)).waitFor();
    expect(await watch.settled()).toEqual([]);
  });

  /** A box's top and bottom on the page. */
  const box = async (l: Locator) => {
    const b = (await l.boundingBox())!;
    return { top: b.y, bottom: b.y + b.height };
  };

  it('when the Domains screen is shown at 375 and 1280 px, then nothing scrolls sideways, each domain is a card, its steps go once verified and the fallbacks stand apart from Check again', async () => {
    const u = await createUser(d.t, { status: 'active' });
    // A long name: its TXT record name and verification URL are longer than a phone is wide.
    const hostname = `links-of-the-spring-campaign-${Date.now().toString(36)}.shop.example.test`;
    const added = await d.t.request({ method: 'POST', url: '/api/v1/domains', token: u.token, payload: { hostname } });
    expect(added.status, added.text).toBe(201);

    const { page, watch } = await d.open({ width: 375, height: 800 });
    await d.signIn(page, u.username, u.password);
    await page.goto(`${d.origin}/app/domains`);
    const card = page.getByRole('region', { name: hostname });
    await card.getByText(added.body.verification.txt_value).waitFor();
    expect(await horizontalOverflow(page)).toBe(0);
    await d.shot(page, 'phone-domains');

    await page.setViewportSize({ width: 1280, height: 900 });
    const style = await card.evaluate((el) => {
      const s = (
        globalThis as unknown as { getComputedStyle(e: unknown): { borderTopWidth: string; backgroundColor: string } }
      ).getComputedStyle(el);
      return { border: s.borderTopWidth, background: s.backgroundColor };
    });
    expect(style).toEqual({ border: '1px', background: 'rgb(255, 255, 255)' }); // the cards and panels of the other screens
    await expect(card.getByText(`_ferry.${hostname}`).isVisible()).resolves.toBe(true);

    dns.txt.set(added.body.verification.txt_name, [added.body.verification.txt_value]);
    await card.getByRole('button', { name: `Verify ${hostname}` }).click();
    const again = card.getByRole('button', { name: `Check ${hostname} again` });
    await again.waitFor();
    // Verified: the steps are done, out of the way (still there to read, folded).
    await expect(card.getByText(`_ferry.${hostname}`).isVisible()).resolves.toBe(false);
    const fallbacks = card.getByRole('form', { name: `Fallbacks of ${hostname}` });
    expect((await box(fallbacks)).top - (await box(again)).bottom).toBeGreaterThanOrEqual(16);
    await d.shot(page, 'domains-verified-1280');
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await horizontalOverflow(page)).toBe(0);
    expect(await watch.settled()).toEqual([]);
  });
});
