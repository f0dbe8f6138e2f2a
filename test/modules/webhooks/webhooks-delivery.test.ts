import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { createLink } from '../../helpers/factories.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import {
  createHook,
  deliveries,
  linkCreated,
  settle,
  startReceiver,
  writeEvents,
  type Receiver,
  type Received,
} from './webhooks.helpers.js';

const HOOKS = '/api/v1/webhooks';

/** standardwebhooks' own check of a request (throws when the signature or timestamp does not hold). */
const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });

describe.each(engines)('webhook deliveries on %s', (engine) => {
  // Receivers listen on loopback: WEBHOOK_ALLOW_PRIVATE lets the hooks reach them.
  const t = useTestApp(engine, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const alice = useUser(t);
  const bob = useUser(t);
  const admin = useUser(t, { role: 'admin' });
  const receivers: Receiver[] = [];
  const receiver = async (...script: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...script);
    receivers.push(r);
    return r;
  };
  // Each test starts at the wall clock: tokens last a day, and standardwebhooks holds timestamps to it (± 5 min).
  beforeEach(() => {
    t.clock.ms = Date.now();
  });
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
  });

  it("when a user's event is written, then the hook receives it signed per Standard Webhooks", async () => {
    const r = await receiver();
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    await writeEvents(t, [linkCreated(alice.id, 'sig1')]);
    const [got] = await r.next(1);
    expect(got!.json).toMatchObject({ type: 'link.created', data: { short_code: 'sig1' } });
    expect(got!.json.id).toMatch(/^evt_/);
    expect(got!.headers['webhook-id']).toBe(got!.json.id);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toMatch(/^Ferry-Webhooks\//);
    expect(Number(got!.headers['webhook-timestamp'])).toBe(Math.floor(t.clock.now() / 1000));
    expect(verify(hook.secret, got!)).toMatchObject({ type: 'link.created' });
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, got!)).toThrow();
    await settle(t);
    const [attempt] = await deliveries(t, alice.token, hook.id);
    expect(attempt).toMatchObject({
      event_id: got!.json.id,
      event_type: 'link.created',
      status_code: 204,
      error: null,
    });
    const metrics = await t.app.inject({ url: '/metrics' });
    expect(metrics.body).toMatch(/^ferry_webhook_deliveries_total\{outcome="delivered"\} [1-9]/m);
    expect(metrics.body).toMatch(/^ferry_webhook_oldest_undelivered_seconds \d/m);
  });

  it('when the receiver answers 500 twice and then recovers, then the event arrives after the retries, each attempt logged', async () => {
    const r = await receiver([{ status: 500, body: 'down' }, { status: 500, body: 'still down' }, { status: 200 }]);
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    await writeEvents(t, [linkCreated(alice.id, 'retry1')]);
    await r.next(1);
    await settle(t);
    // Not before its time: the second attempt is due 5 s (± 10 %) later.
    t.clock.advance(4_000);
    await settle(t);
    expect(r.received).toHaveLength(1);
    t.clock.advance(2_000);
    await t.app.webhookDispatcher.tick();
    await r.next(2);
    await settle(t);
    t.clock.advance(5.5 * 60_000);
    await t.app.webhookDispatcher.tick();
    const all = await r.next(3);
    expect(new Set(all.map((x) => x.headers['webhook-id'])).size).toBe(1);
    await settle(t);
    const log = await deliveries(t, alice.token, hook.id);
    expect(log.map((d) => [d.attempt, d.status_code])).toEqual([
      [3, 200],
      [2, 500],
      [1, 500],
    ]);
    expect(log[2]).toMatchObject({ response_body: 'down', error: 'The receiver answered 500' });
    const first = log[2]!;
    const gap = Date.parse(first.next_attempt_at as string) - Date.parse(first.attempted_at as string);
    expect(gap).toBeGreaterThanOrEqual(4_500);
    expect(gap).toBeLessThanOrEqual(5_500);
    expect(log[0]!.next_attempt_at).toBeNull();
    const hookNow = await t.request({ url: `${HOOKS}/${hook.id}`, token: alice.token });
    expect(hookNow.body.enabled).toBe(true);
  });

  it('when the receiver answers 410, then the hook is disabled at once, with its reason, and nothing is retried', async () => {
    const r = await receiver([{ status: 410 }]);
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    await writeEvents(t, [linkCreated(alice.id, 'gone1')]);
    await r.next(1);
    await settle(t);
    const res = await t.request({ url: `${HOOKS}/${hook.id}`, token: alice.token });
    expect(res.body).toMatchObject({ enabled: false, disabled_reason: 'The receiver answered 410 Gone' });
    const log = await deliveries(t, alice.token, hook.id);
    expect(log).toHaveLength(1);
    expect(log[0]!.next_attempt_at).toBeNull();
  });

  it('when every delivery of a hook has failed for 3 days, then the next failure disables it', async () => {
    const r = await receiver([{ status: 500 }]);
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    const since = t.clock.now() - 3 * 24 * 3_600_000;
    await t.storage.db.updateTable('webhooks').set({ failing_since: since }).where('id', '=', hook.id).execute();
    await writeEvents(t, [linkCreated(alice.id, 'days3')]);
    await r.next(1);
    await settle(t);
    const res = await t.request({ url: `${HOOKS}/${hook.id}`, token: alice.token });
    expect(res.body).toMatchObject({ enabled: false, disabled_reason: 'Every delivery failed for 3 days' });
  });

  it('when the receiver asks Retry-After: 120, then the next attempt waits 120 s, not 5 s', async () => {
    const r = await receiver([{ status: 503, headers: { 'retry-after': '120' } }, { status: 200 }]);
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    await writeEvents(t, [linkCreated(alice.id, 'later1')]);
    await r.next(1);
    await settle(t);
    t.clock.advance(10_000);
    await settle(t);
    expect(r.received).toHaveLength(1);
    const first = (await deliveries(t, alice.token, hook.id)).find((d) => d.attempt === 1)!;
    const gap = Date.parse(first.next_attempt_at as string) - Date.parse(first.attempted_at as string);
    expect(gap).toBeGreaterThanOrEqual(120_000);
    t.clock.advance(111_000);
    await t.app.webhookDispatcher.tick();
    await r.next(2);
  });

  it('when the secret is rotated, then deliveries carry two signatures, each verified by standardwebhooks', async () => {
    const r = await receiver();
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    const rotated = await t.request({ method: 'POST', url: `${HOOKS}/${hook.id}/rotate-secret`, token: alice.token });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const test = await t.request({ method: 'POST', url: `${HOOKS}/${hook.id}/test`, token: alice.token });
    expect(test.status, test.text).toBe(202);
    const [got] = await r.next(1);
    expect(got!.json.type).toBe('webhook.test');
    expect(String(got!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(hook.secret, got!)).toBeTruthy();
    expect(verify(rotated.body.secret, got!)).toBeTruthy();
    // A day later the old secret signs no more.
    t.clock.advance(24 * 3_600_000 + 1_000);
    await writeEvents(t, [linkCreated(alice.id, 'rot2')]);
    const [, later] = await r.next(2);
    expect(String(later!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    const content = `${String(later!.headers['webhook-id'])}.${String(later!.headers['webhook-timestamp'])}.${later!.body}`;
    const { createHmac } = await import('node:crypto');
    const expected = (s: string) =>
      `v1,${createHmac('sha256', Buffer.from(s.slice(6), 'base64'))
        .update(content)
        .digest('base64')}`;
    expect(later!.headers['webhook-signature']).toBe(expected(rotated.body.secret));
  });

  it("when B's events are written, then A's hook never hears them; an instance hook hears both; bots and domains filter", async () => {
    const ra = await receiver();
    const rall = await receiver();
    await createHook(t, alice.token, { url: ra.url, events: ['link.created', 'link.clicked'] });
    const instance = await createHook(t, admin.token, { url: rall.url, events: ['link.created'], scope: 'instance' });
    const botClick = {
      type: 'link.clicked' as const,
      userId: alice.id,
      domainId: null,
      linkId: 1,
      data: { click: { id: 'c1', bot: true }, link: { id: 1 } },
    };
    await writeEvents(t, [
      linkCreated(bob.id, 'bobs'),
      botClick,
      linkCreated(null, 'instance'),
      linkCreated(alice.id, 'alices'),
    ]);
    const [only] = await ra.next(1);
    const both = await rall.next(3);
    await settle(t);
    expect(ra.received).toHaveLength(1);
    expect((only!.json.data as { short_code: string }).short_code).toBe('alices');
    expect(both.map((x) => (x.json.data as { short_code: string }).short_code).sort()).toEqual([
      'alices',
      'bobs',
      'instance',
    ]);
    const bobsView = await t.request({ url: `${HOOKS}/${instance.id}`, token: bob.token });
    expect(bobsView.status).toBe(404);
  });

  it('when an attempt is redelivered, then the receiver gets the same event (same webhook-id) again', async () => {
    const r = await receiver();
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    await writeEvents(t, [linkCreated(alice.id, 'again1')]);
    const [first] = await r.next(1);
    await settle(t);
    const [attempt] = await deliveries(t, alice.token, hook.id);
    const res = await t.request({
      method: 'POST',
      url: `${HOOKS}/${hook.id}/deliveries/${attempt!.id}/redeliver`,
      token: alice.token,
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ event_id: first!.json.id, attempted_at: null });
    const [, second] = await r.next(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    const other = await t.request({
      method: 'POST',
      url: `${HOOKS}/${hook.id}/deliveries/${attempt!.id}/redeliver`,
      token: bob.token,
    });
    expect(other.status).toBe(404);
  });

  it('when a worker claimed an attempt and died mid-delivery, then it is delivered once its lease has run out', async () => {
    const r = await receiver();
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    const now = t.clock.now();
    // What a killed process leaves: a pending attempt under a lease nobody renews.
    const event = { id: 'evt_killedmidflight', type: 'link.created', timestamp: new Date(now).toISOString(), data: {} };
    await t.storage.db
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: hook.id,
        event_id: event.id,
        event_type: event.type,
        payload: JSON.stringify(event),
        fanout_key: null,
        attempt: 1,
        first_due_at: now,
        due_at: now,
        claimed_until: now + 60_000,
      })
      .execute();
    await settle(t);
    expect(r.received).toHaveLength(0);
    t.clock.advance(60_001);
    await t.app.webhookDispatcher.tick();
    const [got] = await r.next(1);
    expect(got!.headers['webhook-id']).toBe(event.id);
    await settle(t);
    const log = await deliveries(t, alice.token, hook.id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status_code: 204, error: null });
  });

  it('when events were written while no hook existed, then a hook made afterwards hears only the events after it', async () => {
    // With no hook the fan-out reads nothing and moves its position only now and then: it lags behind these.
    await settle(t);
    await writeEvents(t, [linkCreated(alice.id, 'before1'), linkCreated(alice.id, 'before2')]);
    await settle(t);
    const r = await receiver();
    await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    await writeEvents(t, [linkCreated(alice.id, 'after1')]);
    const [got] = await r.next(1);
    await settle(t);
    expect(got!.json).toMatchObject({ type: 'link.created', data: { short_code: 'after1' } });
    expect(r.received.map((x) => (x.json.data as { short_code: string }).short_code)).toEqual(['after1']);
  });

  it('when a link is created through the API, then the hook receives link.created with the link as the API shows it', async () => {
    const r = await receiver();
    const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
    const link = await createLink(t, { original_url: 'https://example.com/e2e' }, alice.token);
    t.app.webhookDispatcher.wake();
    const [got] = await r.next(1);
    expect(got!.json.type).toBe('link.created');
    expect(got!.json.data).toMatchObject({ id: link.id, original_url: 'https://example.com/e2e' });
    expect(verify(hook.secret, got!)).toBeTruthy();
    // Bob's link is not Alice's hook's to hear.
    await createLink(t, { original_url: 'https://example.com/bobs' }, bob.token);
    await settle(t);
    expect(r.received).toHaveLength(1);
  });
});
