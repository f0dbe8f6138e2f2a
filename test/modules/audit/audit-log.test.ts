import { describe, expect, it } from 'vitest';
import { recordAudit } from '../../../src/db/audit-log.js';
import { createTestApp, engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';

const DAY = 86_400_000;

/** SPEC §23: GET /api/v1/audit-log, what writes it, and how long it is kept. */
describe.each(engines)('the audit log on %s', (engine) => {
  const t = useTestApp(engine, { env: { AUDIT_RETENTION_DAYS: '30' } });
  const admin = useUser(t, { role: 'admin' });

  const list = (query: string, token = admin.token) => t.request({ url: `/api/v1/audit-log${query}`, token });

  it('when a user who is no admin asks, then 403; without a token 401', async () => {
    const u = await createUser(t);
    expectEnvelope(await list('', u.token), 403, 'FORBIDDEN');
    expectEnvelope(await t.request({ url: '/api/v1/audit-log' }), 401, 'UNAUTHENTICATED');
  });

  it('when an admin changes a role and a status, then both are entries with the admin, the address and before/after', async () => {
    const u = await createUser(t);
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: admin.token,
      payload: { role: 'admin', status: 'suspended' },
      remoteAddress: '203.0.113.9',
    });
    expect(res.status, res.text).toBe(200);
    const page = await list(`?actor_id=${admin.id}&limit=100`);
    expect(page.status).toBe(200);
    const mine = page.body.data.filter((e: { target_id: string }) => e.target_id === String(u.id));
    expect(mine.map((e: { action: string }) => e.action).sort()).toEqual(['user.role_changed', 'user.status_changed']);
    for (const e of mine) {
      expect(e).toMatchObject({ actor_id: admin.id, actor: admin.username, target_type: 'user', ip: '203.0.113.9' });
      expect(e.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(mine.find((e: { action: string }) => e.action === 'user.role_changed').details).toEqual({
      from: 'user',
      to: 'admin',
    });
  });

  it('when a change is refused (the last admin), then no entry is written with it', async () => {
    const lone = await createTestApp(engine);
    try {
      const only = await createUser(lone, { role: 'admin' });
      const res = await lone.request({
        method: 'PATCH',
        url: `/api/v1/users/${only.id}`,
        token: only.token,
        payload: { role: 'user' },
      });
      expectEnvelope(res, 409, 'LAST_ADMIN');
      const rows = await lone.storage.db
        .selectFrom('audit_log')
        .select('action')
        .where('action', '=', 'user.role_changed')
        .execute();
      expect(rows).toEqual([]);
    } finally {
      await lone.close();
    }
  });

  it('when the transaction an entry is written in rolls back, then the entry goes with it', async () => {
    await expect(
      t.storage.db.transaction().execute(async (tx) => {
        await recordAudit(tx, { action: 'link.disabled', actor: 'cli', target: { type: 'link', id: 'rolledback1' } });
        throw new Error('the action failed');
      }),
    ).rejects.toThrow('the action failed');
    const rows = await t.storage.db
      .selectFrom('audit_log')
      .select('id')
      .where('target_id', '=', 'rolledback1')
      .execute();
    expect(rows).toEqual([]);
  });

  it('when a key is created and revoked and a link disabled, then each is an entry', async () => {
    const u = await createUser(t);
    const key = await t.request({
      method: 'POST',
      url: `/api/v1/users/${u.id}/api-keys`,
      token: u.token,
      payload: { name: 'audited', scopes: ['links:read'] },
    });
    expect(key.status).toBe(201);
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/users/${u.id}/api-keys/${key.body.id}`,
      token: admin.token,
    });
    expect(del.status).toBe(204);
    const link = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: u.token,
      payload: { original_url: 'https://example.com/audited' },
    });
    const disabled = await t.request({
      method: 'PATCH',
      url: `/api/v1/links/${link.body.short_code}`,
      token: admin.token,
      payload: { disabled: true, disabled_reason: 'spam' },
    });
    expect(disabled.status, disabled.text).toBe(200);
    const created = await list(`?action=api_key.created&actor_id=${u.id}`);
    expect(created.body.data).toEqual([
      expect.objectContaining({ target_type: 'api_key', target_id: String(key.body.id), actor: u.username }),
    ]);
    expect(created.body.data[0].details).toMatchObject({ user_id: u.id, name: 'audited', scopes: 'links:read' });
    const revoked = await list(`?action=api_key.revoked&actor_id=${admin.id}`);
    expect(revoked.body.data[0]).toMatchObject({ target_id: String(key.body.id), details: { user_id: u.id } });
    const dis = await list(`?action=link.disabled&actor_id=${admin.id}`);
    expect(dis.body.data[0]).toMatchObject({ target_type: 'link', target_id: link.body.short_code });
    expect(dis.body.data[0].details).toMatchObject({ reason: 'spam' });
  });

  it('when pages are read by cursor with filters, then newest first, each entry once, and since/until bound them', async () => {
    const base = Date.parse('2030-01-01T00:00:00.000Z');
    const actor = await createUser(t);
    await t.storage.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 25; i++)
        await recordAudit(tx, {
          action: i % 2 ? 'domain.added' : 'domain.removed',
          actor: { userId: actor.id, ip: '198.51.100.1' },
          target: { type: 'domain', id: i },
          at: base + i * 1000,
        });
    });
    const seen: number[] = [];
    const from = new Date(base).toISOString(); // the actor's sign-in (now) is before them
    let url = `?actor_id=${actor.id}&since=${from}&limit=10`;
    for (;;) {
      const page = await list(url);
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(10);
      seen.push(...page.body.data.map((e: { target_id: string }) => Number(e.target_id)));
      if (!page.body.pagination.nextCursor) break;
      expect(page.headers.link).toContain('rel="next"');
      url = `?actor_id=${actor.id}&since=${from}&limit=10&cursor=${page.body.pagination.nextCursor}`;
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => 24 - i));
    const added = await list(`?actor_id=${actor.id}&action=domain.added&since=${from}&limit=100`);
    expect(added.body.data).toHaveLength(12);
    const since = new Date(base + 5000).toISOString();
    const until = new Date(base + 10_000).toISOString();
    const window = await list(`?actor_id=${actor.id}&since=${since}&until=${until}`);
    expect(window.body.data.map((e: { target_id: string }) => e.target_id)).toEqual(['9', '8', '7', '6', '5']);
    expect(window.body.data[0]).toMatchObject({ actor: actor.username, ip: '198.51.100.1', details: null });
  });

  it('when a cursor is tampered with or reused with other filters, or a filter is malformed, then 400', async () => {
    const page = await list('?limit=1');
    const cursor = page.body.pagination.nextCursor as string;
    expectEnvelope(await list(`?limit=1&cursor=${cursor}x`), 400, 'VALIDATION_ERROR');
    expectEnvelope(await list(`?limit=1&action=domain.added&cursor=${cursor}`), 400, 'VALIDATION_ERROR');
    expectEnvelope(await list('?action=nothing.known'), 400, 'VALIDATION_ERROR');
    expectEnvelope(await list('?since=1969-12-31T23:59:59Z'), 400, 'VALIDATION_ERROR');
  });

  it('when v2 is asked, then the entries are camelCase', async () => {
    const res = await t.request({ url: '/api/v2/audit-log?limit=1', token: admin.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(
      ['action', 'actor', 'actorId', 'at', 'details', 'id', 'ip', 'targetId', 'targetType'].sort(),
    );
  });

  it('when the sweep runs, then entries older than AUDIT_RETENTION_DAYS go and younger ones stay', async () => {
    const now = t.clock.now();
    await t.storage.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 30; i++)
        await recordAudit(tx, {
          action: 'backup.created',
          actor: 'cli',
          target: { type: 'backup', id: `sweep-old-${i}` },
          at: now - 31 * DAY - i,
        });
      await recordAudit(tx, {
        action: 'backup.created',
        actor: 'cli',
        target: { type: 'backup', id: 'sweep-young' },
        at: now - 29 * DAY,
      });
    });
    await t.app.runJob('sweep-audit-log');
    const left = await t.storage.db
      .selectFrom('audit_log')
      .select('target_id')
      .where('target_id', 'like', 'sweep-%')
      .execute();
    expect(left.map((r) => r.target_id)).toEqual(['sweep-young']);
  });
});
