import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../helpers/factories.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * The link screen's live clicks (SPEC §22): the dashboard reads the event stream with a streaming fetch (with the
 * Authorization header) and counts this link's clicks as they are stored, not another link's. SQLite only, like
 * the other browser tests.
 */
const CHROME_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: live clicks'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  it("when a link is visited while its screen is open, then the screen counts its clicks live, not another link's", async () => {
    const u = await createUser(d.t, { status: 'active' });
    const make = async () =>
      (
        await d.t.request({
          method: 'POST',
          url: '/api/v1/links',
          token: u.token,
          payload: { original_url: d.landingUrl },
        })
      ).body.short_code as string;
    const [code, other] = [await make(), await make()];
    const { page } = await d.open();
    await d.signIn(page, u.username, u.password);
    const streamed = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/events');
    await page.goto(`${d.origin}/app/links/${code}/stats`);
    expect((await streamed).status()).toBe(200);
    await expect(page.getByTestId('live-count').textContent()).resolves.toBe('0');
    const visit = (c: string) =>
      fetch(`${d.origin}/${c}`, { redirect: 'manual', headers: { 'user-agent': CHROME_UA } });
    expect((await visit(other)).status).toBe(302);
    expect((await visit(code)).status).toBe(302);
    expect((await visit(code)).status).toBe(302);
    await d.t.app.clickQueue.flush();
    await expect.poll(() => page.getByTestId('live-count').textContent(), { timeout: 10_000 }).toBe('2');
    await expect(page.locator('.live-clicks li').count()).resolves.toBe(2);
  });
});
