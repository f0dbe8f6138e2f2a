import { describe, expect, it } from 'vitest';
import { toCamel } from '../../src/lib/case-mapping.js';
import { engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { createUser } from '../helpers/factories.js';

/**
 * The user, order and link flows written once and run against every API version on every engine (SPEC §9:
 * v2 is v1 with camelCase link fields and cursor-only collections). `f()` names a link field as the version
 * under test spells it; every response is checked against that version's part of the OpenAPI document.
 */
const matrix = engines.flatMap((engine) => ([1, 2] as const).map((version) => ({ engine, version })));

describe.each(matrix)('shared flows on $engine, API v$version', ({ engine, version }) => {
  const base = `/api/v${version}`;
  const f = (snake: string): string => (version === 2 ? toCamel(snake) : snake);

  const t = useTestApp(engine);
  const alice = useUser(t, { status: 'active' });
  const bob = useUser(t, { status: 'active' });
  const admin = useUser(t, { role: 'admin', status: 'active' });

  it('when a user reads, patches and deletes their account, then each step answers as the contract says', async () => {
    const u = await createUser(t);
    const got = await t.request({ url: `${base}/users/${u.id}`, token: u.token });
    expect(got.status).toBe(200);
    const patched = await t.request({
      method: 'PATCH',
      url: `${base}/users/${u.id}`,
      token: u.token,
      headers: { 'if-match': String(got.headers.etag) },
      payload: { name: 'Shared' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Shared', version: 2 });
    expect((await t.request({ url: `${base}/users/${u.id}`, token: bob.token })).status).toBe(403);
    expect((await t.request({ method: 'DELETE', url: `${base}/users/${u.id}`, token: u.token })).status).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `${base}/users/${u.id}`, token: admin.token })).status).toBe(404);
  });

  it('when an order is placed twice with one key, then one order exists and the replay is marked; another user cannot read it', async () => {
    const send = () =>
      t.request({
        method: 'POST',
        url: `${base}/orders`,
        token: alice.token,
        headers: { 'idempotency-key': `shared-${version}-1` },
        payload: { itemId: 7, quantity: 2 },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(first.headers.location).toBe(`${base}/users/${alice.id}/orders/${first.body.id}`);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(
      (await t.request({ url: `${base}/users/${alice.id}/orders/${first.body.id}`, token: alice.token })).body,
    ).toEqual(first.body);
    expect(
      (await t.request({ url: `${base}/users/${alice.id}/orders/${first.body.id}`, token: bob.token })).status,
    ).toBe(403);
  });

  it('when collections are walked by cursor, then every item comes once; page mode is v1 only', async () => {
    for (let i = 0; i < 5; i++) {
      await t.request({
        method: 'POST',
        url: `${base}/orders`,
        token: bob.token,
        headers: { 'idempotency-key': `walk-${version}-${i}` },
        payload: { itemId: i + 1, quantity: 1 },
      });
    }
    const seen: number[] = [];
    let url: string | null = `${base}/users/${bob.id}/orders?limit=2&sort=itemId`;
    while (url) {
      const page = await t.request({ url, token: bob.token });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((o: { id: number }) => o.id));
      const next = page.body.pagination.nextCursor as string | null;
      url = next ? `${base}/users/${bob.id}/orders?limit=2&sort=itemId&cursor=${encodeURIComponent(next)}` : null;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    const paged = await t.request({ url: `${base}/users/${bob.id}/orders?page=2&limit=2`, token: bob.token });
    if (version === 1) {
      expect(paged.status).toBe(200);
      expect(paged.body.pagination).toMatchObject({ page: 2, limit: 2, total: 5, totalPages: 3 });
    } else {
      expect(paged.status).toBe(400);
      expect(paged.body.error.details[0].field).toBe('page');
    }
  });

  it('when a link is created, visited and read back, then its fields, redirect and stats agree in this version', async () => {
    const created = await t.request({
      method: 'POST',
      url: `${base}/links`,
      token: alice.token,
      payload: { [f('original_url')]: 'https://example.com/shared', [f('short_code')]: `sh${version}X` },
    });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`${base}/links/sh${version}X`);
    expect(created.body).toMatchObject({
      [f('short_code')]: `sh${version}X`,
      [f('original_url')]: 'https://example.com/shared',
      [f('user_id')]: alice.id,
      [f('click_count')]: 0,
      [f('expires_at')]: null,
    });
    expect(created.body[f('short_url')]).toBe(`${t.config.publicBaseUrl}/sh${version}X`);
    const visit = await t.request({
      url: `/sh${version}X`,
      headers: { referer: 'https://news.example/item', 'user-agent': 'Mozilla/5.0 (shared-test)' },
    });
    expect(visit.status).toBe(302);
    expect(visit.headers.location).toBe('https://example.com/shared');
    await t.app.clickQueue.flush();
    const stats = await t.request({ url: `${base}/links/sh${version}X/stats`, token: alice.token });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({
      [f('short_code')]: `sh${version}X`,
      [f('total_clicks')]: 1,
      [f('unique_visitors')]: 1,
    });
    expect(stats.body[f('top_user_agents')]).toEqual([{ value: 'Mozilla/5.0 (shared-test)', clicks: 1 }]);
    const read = await t.request({ url: `${base}/links/sh${version}X`, token: alice.token });
    expect(read.status).toBe(200);
    expect(read.body[f('click_count')]).toBe(1);
  });

  it("when another user deletes or reads stats of a user's link, then 403; the owner deletes it and the code is gone", async () => {
    const created = await t.request({
      method: 'POST',
      url: `${base}/links`,
      token: alice.token,
      payload: { [f('original_url')]: 'https://example.com/owned' },
    });
    const code = created.body[f('short_code')] as string;
    expect((await t.request({ method: 'DELETE', url: `${base}/links/${code}`, token: bob.token })).status).toBe(403);
    expect((await t.request({ url: `${base}/links/${code}/stats`, token: bob.token })).status).toBe(403);
    expect((await t.request({ method: 'DELETE', url: `${base}/links/${code}`, token: alice.token })).status).toBe(204);
    expect((await t.request({ url: `${base}/links/${code}` })).status).toBe(404);
    expect((await t.request({ url: `/${code}` })).status).toBe(404);
  });

  it("when a user's links are listed, then only theirs, in this version's shape", async () => {
    const list = await t.request({
      url: `${base}/users/${alice.id}/links?limit=100&sort=${f('created_at')}`,
      token: alice.token,
    });
    expect(list.status).toBe(200);
    expect(list.body.data.length).toBeGreaterThan(0);
    for (const link of list.body.data) expect(link[f('user_id')]).toBe(alice.id);
    expect((await t.request({ url: `${base}/users/${alice.id}/links`, token: bob.token })).status).toBe(403);
  });
});
