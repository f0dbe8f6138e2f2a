import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    await expect.poll(async () => (await d.t.request({ url: `/api/v1/domains/${domain.id}`, token: u.token })).body.not_found_redirect).toBe('https://example.com/nothing-here');

    await page.getByRole('link', { name: 'New link' }).click();
    await page.getByLabel('Destination URL').fill(`${d.landingUrl}?on=domain`);
    await page.getByLabel('Domain').selectOption(hostname);
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByText(new RegExp(`^http://${hostname.replace(/\./g, '\\.')}/[0-9a-zA-Z]{8}$`)).waitFor();
    expect(await watch.settled()).toEqual([]);
  });
});
