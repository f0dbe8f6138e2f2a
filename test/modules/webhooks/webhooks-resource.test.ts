import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../../helpers/app.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { useBeforeAll, useUser } from '../../helpers/fixtures.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { addDomain } from '../domains/domains.helpers.js';
import { createApiKey } from '../api-keys/api-keys.helpers.js';
import { createHook, deliveries, linkCreated, settle, writeEvents } from './webhooks.helpers.js';

const HOOKS = '/api/v1/webhooks';

describe.each(engines)('the webhooks resource on %s', (engine) => {
  // Names resolve through a DNS server on loopback: nothing leaves the machine, and no refused address is dialled.
  const dns = useBeforeAll('dns', startDnsServer, (s) => s.close());
  const t = useBeforeAll(
    'app',
    () => createTestApp(engine, { env: { DNS_SERVERS: dns.address } }),
    (app) => app.close(),
  );
  const alice = useUser(t);
  const bob = useUser(t);
  const admin = useUser(t, { role: 'admin' });

  it('when a user creates a hook with a public host, then 201 with Location and a whsec_ secret shown once', async () => {
    dns.a.set('hooks.example.com', '93.184.216.34');
    const res = await t.request({
      method: 'POST',
      url: HOOKS,
      token: alice.token,
      payload: { url: 'https://hooks.example.com/in', events: ['link.created', 'link.clicked'], description: 'crm' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.location).toBe(`${HOOKS}/${res.body.id}`);
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(res.body.secret.slice(6), 'base64')).toHaveLength(32);
    expect(res.body).toMatchObject({
      user_id: alice.id,
      scope: 'user',
      events: ['link.created', 'link.clicked'],
      domains: null,
      include_bots: false,
      enabled: true,
      disabled_reason: null,
      description: 'crm',
    });
    const again = await t.request({ url: `${HOOKS}/${res.body.id}`, token: alice.token });
    expect(again.status).toBe(200);
    expect(again.body.secret).toBeUndefined();
    // Kept sealed at rest, not as written.
    const row = await t.storage.db
      .selectFrom('webhooks')
      .select('secret')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(res.body.secret.slice(6, 20));
  });

  it('when the URL is not http(s) or the event unknown, then 400 VALIDATION_ERROR', async () => {
    const ftp = await t.request({
      method: 'POST',
      url: HOOKS,
      token: alice.token,
      payload: { url: 'ftp://hooks.example.com/', events: ['link.created'] },
    });
    expectEnvelope(ftp, 400, 'VALIDATION_ERROR');
    const unknown = await t.request({
      method: 'POST',
      url: HOOKS,
      token: alice.token,
      payload: { url: 'https://hooks.example.com/', events: ['link.exploded'] },
    });
    expectEnvelope(unknown, 400, 'VALIDATION_ERROR');
  });

  it('when the host resolves to a private address in any form, then 422 WEBHOOK_TARGET_FORBIDDEN', async () => {
    const inside: Array<[string, string, 'a' | 'aaaa']> = [
      ['loop.example.com', '127.0.0.1', 'a'],
      ['ten.example.com', '10.1.2.3', 'a'],
      ['link-local.example.com', '169.254.169.254', 'a'],
      ['cgnat.example.com', '100.64.0.1', 'a'],
      ['zero.example.com', '0.0.0.0', 'a'],
      ['v6-loop.example.com', '::1', 'aaaa'],
      ['v6-mapped.example.com', '::ffff:10.0.0.1', 'aaaa'],
      ['v6-ula.example.com', 'fd00::1', 'aaaa'],
    ];
    for (const [name, address, kind] of inside) {
      dns[kind].set(name, address);
      const res = await t.request({
        method: 'POST',
        url: HOOKS,
        token: alice.token,
        payload: { url: `https://${name}/x`, events: ['link.created'] },
      });
      expectEnvelope(res, 422, 'WEBHOOK_TARGET_FORBIDDEN');
    }
    // One public address and one private: every address is checked.
    dns.a.set('mixed.example.com', ['93.184.216.34', '192.168.1.1']);
    const mixed = await t.request({
      method: 'POST',
      url: HOOKS,
      token: alice.token,
      payload: { url: 'https://mixed.example.com/x', events: ['link.created'] },
    });
    expectEnvelope(mixed, 422, 'WEBHOOK_TARGET_FORBIDDEN');
    const literal = await t.request({
      method: 'POST',
      url: HOOKS,
      token: alice.token,
      payload: { url: 'http://[::ffff:127.0.0.1]:8080/x', events: ['link.created'] },
    });
    expectEnvelope(literal, 422, 'WEBHOOK_TARGET_FORBIDDEN');
  });

  it('when a user asks for an instance-wide hook, then 403; an admin gets it', async () => {
    dns.a.set('hooks.example.com', '93.184.216.34');
    const body = { url: 'https://hooks.example.com/all', events: ['link.created'], scope: 'instance' };
    expectEnvelope(
      await t.request({ method: 'POST', url: HOOKS, token: alice.token, payload: body }),
      403,
      'FORBIDDEN',
    );
    const res = await t.request({ method: 'POST', url: HOOKS, token: admin.token, payload: body });
    expect(res.status, res.text).toBe(201);
    expect(res.body.scope).toBe('instance');
  });

  it("when a user names another user's domain, then 400; their own is accepted", async () => {
    dns.a.set('hooks.example.com', '93.184.216.34');
    const bobs = await addDomain(t, bob.token);
    const alices = await addDomain(t, alice.token);
    const body = (domains: number[]) => ({ url: 'https://hooks.example.com/d', events: ['link.created'], domains });
    const res = await t.request({ method: 'POST', url: HOOKS, token: alice.token, payload: body([bobs.id]) });
    expectEnvelope(res, 400, 'VALIDATION_ERROR');
    const ok = await t.request({ method: 'POST', url: HOOKS, token: alice.token, payload: body([alices.id, 0]) });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.domains).toEqual([alices.id, 0]);
  });

  it("when another user reads, changes, tests or deletes a hook, then 404 as if it did not exist; the list is one's own", async () => {
    dns.a.set('hooks.example.com', '93.184.216.34');
    const hook = await createHook(t, alice.token, { url: 'https://hooks.example.com/own', events: ['link.created'] });
    const paths: Array<[string, string, unknown?]> = [
      ['GET', `${HOOKS}/${hook.id}`],
      ['PATCH', `${HOOKS}/${hook.id}`, { enabled: false }],
      ['POST', `${HOOKS}/${hook.id}/test`],
      ['POST', `${HOOKS}/${hook.id}/rotate-secret`],
      ['GET', `${HOOKS}/${hook.id}/deliveries`],
      ['DELETE', `${HOOKS}/${hook.id}`],
    ];
    for (const [method, url, payload] of paths) {
      const res = await t.request({ method: method as 'GET', url, token: bob.token, ...(payload ? { payload } : {}) });
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    const list = await t.request({ url: HOOKS, token: bob.token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((h: { id: number }) => h.id)).not.toContain(hook.id);
    const own = await t.request({ url: `${HOOKS}?limit=100`, token: alice.token });
    expect(own.body.data.map((h: { id: number }) => h.id)).toContain(hook.id);
    expect(own.body.data.every((h: { user_id: number }) => h.user_id === alice.id)).toBe(true);
    const adminSees = await t.request({ url: `${HOOKS}/${hook.id}`, token: admin.token });
    expect(adminSees.status).toBe(200);
  });

  it('when a hook is patched, disabled, re-enabled and deleted, then each change shows, and a deleted one is 404', async () => {
    dns.a.set('hooks.example.com', '93.184.216.34');
    const hook = await createHook(t, alice.token, { url: 'https://hooks.example.com/p', events: ['link.created'] });
    const url = `${HOOKS}/${hook.id}`;
    const patched = await t.request({
      method: 'PATCH',
      url,
      token: alice.token,
      payload: { events: ['link.deleted'], include_bots: true, description: null, enabled: false },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ events: ['link.deleted'], include_bots: true, enabled: false });
    await t.storage.db
      .updateTable('webhooks')
      .set({ disabled_reason: 'The receiver answered 410 Gone' })
      .where('id', '=', hook.id)
      .execute();
    const test = await t.request({ method: 'POST', url: `${url}/test`, token: alice.token });
    expectEnvelope(test, 409, 'CONFLICT');
    const enabled = await t.request({ method: 'PATCH', url, token: alice.token, payload: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    dns.a.set('inside.example.com', '10.0.0.7');
    const inside = await t.request({
      method: 'PATCH',
      url,
      token: alice.token,
      payload: { url: 'https://inside.example.com/' },
    });
    expectEnvelope(inside, 422, 'WEBHOOK_TARGET_FORBIDDEN');
    expect((await t.request({ method: 'DELETE', url, token: alice.token })).status).toBe(204);
    expectEnvelope(await t.request({ url, token: alice.token }), 404, 'NOT_FOUND');
    // SPEC §23: the hook's creation and deletion are in the audit log, by its owner.
    const audit = await t.request({ url: `/api/v1/audit-log?actor_id=${alice.id}`, token: admin.token });
    const mine = (audit.body.data as Array<{ action: string; target_id: string }>).filter(
      (e) => e.target_id === String(hook.id),
    );
    expect(mine.map((e) => e.action).sort()).toEqual(['webhook.created', 'webhook.deleted']);
  });

  it('when API keys call, then webhooks:read reads, webhooks:write writes, and neither implies the other', async () => {
    dns.a.set('hooks.example.com', '93.184.216.34');
    const key = async (scopes: string[]) => (await createApiKey(t, alice, scopes)).key;
    const reader = await key(['webhooks:read']);
    const writer = await key(['webhooks:write']);
    const body = { url: 'https://hooks.example.com/k', events: ['link.created'] };
    expectEnvelope(
      await t.request({ method: 'POST', url: HOOKS, token: reader, payload: body }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    const created = await t.request({ method: 'POST', url: HOOKS, token: writer, payload: body });
    expect(created.status, created.text).toBe(201);
    expectEnvelope(await t.request({ url: HOOKS, token: writer }), 403, 'INSUFFICIENT_SCOPE');
    expect((await t.request({ url: `${HOOKS}/${created.body.id}`, token: reader })).status).toBe(200);
  });

  it('when the name resolves inside by the time of a delivery, then the attempt fails with WEBHOOK_TARGET_FORBIDDEN, nothing sent', async () => {
    dns.a.set('rebind.example.com', '93.184.216.34');
    const hook = await createHook(t, alice.token, { url: 'http://rebind.example.com/in', events: ['link.created'] });
    // DNS rebinding: public when checked at creation, loopback at delivery (the no-network guard would throw on a dial).
    dns.a.set('rebind.example.com', '127.0.0.1');
    await writeEvents(t, [linkCreated(alice.id, 'inside')]);
    await settle(t);
    const [attempt] = (await deliveries(t, alice.token, hook.id)).filter((d) => d.attempted_at !== null);
    expect(attempt).toMatchObject({ status_code: null, response_body: null });
    expect(attempt!.error).toMatch(/^WEBHOOK_TARGET_FORBIDDEN/);
    expect(attempt!.next_attempt_at).not.toBeNull();
  });
});
