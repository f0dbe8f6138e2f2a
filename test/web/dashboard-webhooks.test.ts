import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorBeside, horizontalOverflow, sessionToken, unlabelledControls } from '../helpers/browser.js';
import { createUser } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';
import { startReceiver, type Receiver, type Received } from '../modules/webhooks/webhooks.helpers.js';
import { ADMIN, startDashboard, type Dashboard } from './dashboard-fixture.js';

/** standardwebhooks' own check of a request as the receiver got it (throws when no signature holds). */
const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });

/** The delivery log's rows of one event (the test and its redelivery share the webhook-id). */
const rowsOf = (page: Page, eventId: string) =>
  page.locator('.deliveries-table tbody tr').filter({ has: page.locator('code', { hasText: eventId }) });

/**
 * The Webhooks screens (SPEC §22) in Chromium: create a hook with its secret shown once, the test event reaching a
 * receiver on loopback signed with that secret and appearing in the delivery log, redeliver, a failed attempt and
 * its retry, rotate, disable; an admin's instance-wide hook. SQLite only, like the other browser suites (the API
 * underneath is tested on both engines: test/modules/webhooks).
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: webhooks'), () => {
  let d: Dashboard;
  const receivers: Receiver[] = [];
  const receiver = async (...script: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...script);
    receivers.push(r);
    return r;
  };
  // The receivers listen on loopback: WEBHOOK_ALLOW_PRIVATE lets the hooks reach them.
  beforeAll(async () => {
    d = await startDashboard({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
  });
  afterAll(async () => d?.close());

  it('when a user creates a webhook, then its secret is shown once, the test event reaches the receiver signed with it and shows in the log, and Redeliver sends it again', async () => {
    // standardwebhooks holds webhook-timestamp to the wall clock (± 5 min); the app's test clock starts there.
    d.t.clock.ms = Date.now();
    const r = await receiver([{ status: 202, body: 'thanks from the receiver' }]);
    const u = await createUser(d.t, { status: 'active' });
    const { page, watch } = await d.open();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.origin });
    await d.signIn(page, u.username, u.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('You have no webhooks yet.').waitFor();
    // An instance-wide hook is for admins: a user is not offered one.
    await expect(page.getByRole('checkbox', { name: /Instance-wide/ }).count()).resolves.toBe(0);

    // A URL that is not http(s): the API's message stands beside the field.
    await page.getByLabel('Receiver URL').fill('ftp://example.com/hook');
    await page.getByRole('checkbox', { name: /link\.created/ }).check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect(errorBeside(page, 'Receiver URL')).resolves.toMatch(/\S/);

    await page.getByLabel('Receiver URL').fill(r.url);
    await page.getByLabel('Description (optional)').fill('CI receiver');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('heading', { name: 'Webhook created' }).waitFor();
    const secret = (await page.getByLabel('Signing secret', { exact: true }).textContent())!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByRole('button', { name: 'Copy the signing secret' }).click();
    const clipboard = page.evaluate(() =>
      (
        globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
      ).navigator.clipboard.readText(),
    );
    await expect(clipboard).resolves.toBe(secret);
    const token = (await sessionToken(page))!;
    const listed = await d.t.request({ url: '/api/v1/webhooks', token });
    expect(listed.body.data).toMatchObject([{ url: r.url, events: ['link.created'], enabled: true, scope: 'user' }]);
    expect(listed.text).not.toContain(secret);
    const hookId = listed.body.data[0].id as number;

    // Shown once: dismissed, and after a reload, it is nowhere on the page.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.reload();
    await page.getByRole('link', { name: r.url }).waitFor();
    expect(await page.content()).not.toContain(secret);

    // The test event: to the receiver, signed with that secret; in the log with the status and the answer's start.
    await page.getByRole('link', { name: r.url }).click();
    await page.getByRole('heading', { name: `Webhook ${hookId}` }).waitFor();
    await page.getByText('Nothing was sent to this webhook yet.').waitFor();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const [test] = await r.next(1);
    expect(verify(secret, test!)).toMatchObject({ type: 'webhook.test', data: { webhook_id: hookId } });
    const eventId = String(test!.headers['webhook-id']);
    await page.getByRole('status').getByText(`A test event (${eventId}) is on its way.`).waitFor();
    const row = rowsOf(page, eventId);
    await row.getByText('Delivered 202').waitFor();
    await row.getByText('Response', { exact: true }).click();
    await row.getByText('thanks from the receiver').waitFor();
    await expect(row.getByRole('cell', { name: '1', exact: true }).count()).resolves.toBe(1);

    // Redeliver: the same event again (the same webhook-id), a second delivered row.
    await row.getByRole('button', { name: /^Redeliver webhook\.test/ }).click();
    const [, again] = await r.next(2);
    expect(again!.headers['webhook-id']).toBe(eventId);
    expect(verify(secret, again!)).toMatchObject({ type: 'webhook.test' });
    await expect.poll(() => rowsOf(page, eventId).getByText('Delivered 202').count(), { timeout: 15_000 }).toBe(2);

    await d.shot(page, 'webhook-deliveries');
    await page.setViewportSize({ width: 375, height: 800 });
    await expect(horizontalOverflow(page)).resolves.toBe(0);
    await expect(unlabelledControls(page)).resolves.toEqual([]);
    await d.shot(page, 'webhook-deliveries-375');
    expect(await watch.settled()).toEqual([]);
  });

  it('when the receiver fails, then the log shows the status, the answer and the retry; a rotated secret signs beside the old one; a disabled hook sends nothing', async () => {
    d.t.clock.ms = Date.now();
    const r = await receiver([{ status: 500, body: 'down for maintenance' }, { status: 204 }]);
    const u = await createUser(d.t, { status: 'active' });
    const created = await d.t.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      token: u.token,
      payload: { url: r.url, events: ['link.clicked'], include_bots: true },
    });
    expect(created.status).toBe(201);
    const hookId = created.body.id as number;
    const oldSecret = created.body.secret as string;
    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.goto(`${d.origin}/app/webhooks/${hookId}`);
    await page.getByText("link.clicked (bots' clicks too)").waitFor();

    await page.getByRole('button', { name: 'Send a test event' }).click();
    const [failed] = await r.next(1);
    const eventId = String(failed!.headers['webhook-id']);
    const rows = rowsOf(page, eventId);
    await rows.getByText('500: The receiver answered 500').waitFor();
    await rows.getByText('Response', { exact: true }).click();
    await rows.getByText('down for maintenance').waitFor();
    await rows.getByText('Pending', { exact: true }).waitFor(); // attempt 2, due 5 s (± 10 %) later
    d.t.clock.advance(6_000);
    await d.t.app.webhookDispatcher.tick();
    await r.next(2);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await rows.getByText('Delivered 204').waitFor();
    await expect(rows.count()).resolves.toBe(2);

    // Rotate: the new secret once; the next delivery carries both signatures for 24 hours.
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByRole('heading', { name: 'Secret rotated' }).waitFor();
    const newSecret = (await page.getByLabel('Signing secret', { exact: true }).textContent())!;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const [, , signedTwice] = await r.next(3);
    expect(String(signedTwice!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(newSecret, signedTwice!)).toMatchObject({ type: 'webhook.test' });
    expect(verify(oldSecret, signedTwice!)).toMatchObject({ type: 'webhook.test' });

    // Disabled: its state says so, no test event can be sent; enabled again, it can.
    await page.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => page.getByTestId('hook-state').textContent()).toBe('Off');
    await expect(page.getByRole('button', { name: 'Send a test event' }).isDisabled()).resolves.toBe(true);
    expect((await d.t.request({ url: `/api/v1/webhooks/${hookId}`, token: u.token })).body.enabled).toBe(false);
    await page.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => page.getByTestId('hook-state').textContent()).toBe('On');
    await expect(page.getByRole('button', { name: 'Send a test event' }).isEnabled()).resolves.toBe(true);

    // Deleted in two steps: back to the list, which is empty again.
    await page.getByRole('button', { name: `Delete the webhook to ${r.url}` }).click();
    await page.getByRole('button', { name: `Confirm: delete the webhook to ${r.url} for good` }).click();
    await page.getByText('You have no webhooks yet.').waitFor();
    expect((await d.t.request({ url: `/api/v1/webhooks/${hookId}`, token: u.token })).status).toBe(404);
    expect(await watch.settled()).toEqual([]);
  });

  it("when an admin creates an instance-wide webhook, then it is one, and the admin's list shows every user's hooks", async () => {
    const r = await receiver();
    const u = await createUser(d.t, { status: 'active' });
    const theirs = await d.t.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      token: u.token,
      payload: { url: `${r.url}/theirs`, events: ['link.created'] },
    });
    expect(theirs.status).toBe(201);
    const { page, watch } = await d.open();
    await d.signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`${d.origin}/app/webhooks`);
    await page.getByRole('heading', { name: 'Every webhook' }).waitFor();
    await page
      .getByRole('row')
      .filter({ hasText: `${r.url}/theirs` })
      .getByText(`user ${u.id}`)
      .waitFor();
    await page.getByLabel('Receiver URL').fill(`${r.url}/everything`);
    await page.getByRole('checkbox', { name: /domain\.verified/ }).check();
    await page.getByRole('checkbox', { name: /Instance-wide/ }).check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('heading', { name: 'Webhook created' }).waitFor();
    await page
      .getByRole('row')
      .filter({ hasText: `${r.url}/everything` })
      .getByText('Instance-wide')
      .waitFor();
    const token = (await sessionToken(page))!;
    const list = (await d.t.request({ url: '/api/v1/webhooks?limit=100', token })).body.data as Array<{
      url: string;
      scope: string;
    }>;
    expect(list.find((h) => h.url === `${r.url}/everything`)?.scope).toBe('instance');
    await d.shot(page, 'webhooks');
    expect(await watch.settled()).toEqual([]);
  });
});
