import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { createLink, type CreatedLink } from './links.helpers.js';

describe.each(engines)("a user's links: tag, q, sort and `me` on %s", (engine) => {
  const links: CreatedLink[] = [];
  const t = useTestApp(engine);
  const u = useUser(t);
  beforeAll(async () => {
    const specs: Array<Record<string, unknown>> = [
      {
        original_url: 'https://shop.example/100%_off',
        tags: ['promo', 'Spring'],
        expires_at: new Date(t.clock.now() + 3 * 86_400_000).toISOString(),
      },
      { original_url: 'https://blog.example/post', tags: ['blog'] },
      {
        original_url: 'https://shop.example/1000-off',
        tags: ['PROMO'],
        expires_at: new Date(t.clock.now() + 86_400_000).toISOString(),
      },
      { original_url: 'https://docs.example/guide', short_code: `Gd${randomUUID().slice(0, 5)}` },
      { original_url: 'https://shop.example/cart', expires_at: new Date(t.clock.now() + 2 * 86_400_000).toISOString() },
    ];
    for (const spec of specs) {
      links.push(await createLink(t, spec, u.token));
      t.clock.advance(1000);
    }
    // click counts as the click writer would have left them: 5, 0, 9, 5, 2
    for (const [i, n] of [5, 0, 9, 5, 2].entries())
      await t.storage.db.updateTable('links').set({ click_count: n }).where('id', '=', links[i]!.id).execute();
    await createLink(
      t,
      { original_url: 'https://shop.example/other-user', tags: ['promo'] },
      (await createUser(t)).token,
    );
  });

  const list = (query: string, token = u.token, version = 1) =>
    t.request({ url: `/api/v${version}/users/${u.id}/links${query}`, token });
  const codes = (res: { body: { data: Array<{ short_code?: string; shortCode?: string }> } }) =>
    res.body.data.map((l) => l.short_code ?? l.shortCode);
  const at = (...indexes: number[]) => indexes.map((i) => links[i]!.short_code);
  /** Every page of a cursor walk, `limit` at a time. */
  const walk = async (query: string, limit: number, version = 1): Promise<string[]> => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(
        `${query}${query ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        u.token,
        version,
      );
      expect(res.status, res.text).toBe(200);
      seen.push(...(codes(res) as string[]));
      cursor = res.body.pagination.nextCursor;
    } while (cursor);
    return seen;
  };

  it("when filtered by tag (any case), then only that user's links with the tag", async () => {
    expect(codes(await list('?tag=promo'))).toEqual(at(0, 2));
    expect(codes(await list('?tag=SPRING'))).toEqual(at(0));
    expect(codes(await list('?tag=none'))).toEqual([]);
    expectEnvelope(await list('?tag=not%20a%20tag'), 400, 'VALIDATION_ERROR');
  });

  it('when searched with q, then substrings of the URL or the code, any case, with % and _ matching themselves', async () => {
    expect(codes(await list('?q=SHOP.example'))).toEqual(at(0, 2, 4));
    expect(codes(await list(`?q=${links[3]!.short_code.toLowerCase()}`))).toEqual(at(3));
    expect(codes(await list('?q=%25_'))).toEqual(at(0)); // "%_" literally, not "anything"
    expect(codes(await list('?q=_'))).toEqual(at(0));
    expect(codes(await list('?q=shop&tag=promo'))).toEqual(at(0, 2));
  });

  it('when sorted by click_count, created_at or expires_at, then in that order with ties by id; a link that never expires sorts last', async () => {
    expect(codes(await list('?sort=click_count&order=desc'))).toEqual(at(2, 3, 0, 4, 1));
    expect(codes(await list('?sort=click_count'))).toEqual(at(1, 4, 0, 3, 2));
    expect(codes(await list('?sort=created_at&order=desc'))).toEqual(at(4, 3, 2, 1, 0));
    expect(codes(await list('?sort=expires_at'))).toEqual(at(2, 4, 0, 1, 3));
    expect(codes(await list('?sort=expires_at&order=desc'))).toEqual(at(3, 1, 0, 4, 2));
    expectEnvelope(await list('?sort=original_url'), 400, 'VALIDATION_ERROR');
  });

  it('when every sort is walked by cursor two at a time, then each link comes exactly once, in the same order as one page', async () => {
    for (const query of [
      '?sort=click_count&order=desc',
      '?sort=expires_at',
      '?sort=expires_at&order=desc',
      '?sort=created_at',
      '?q=shop&sort=click_count',
    ]) {
      const whole = codes(await list(query));
      expect(await walk(query, 2), query).toEqual(whole);
    }
  });

  it('when a cursor is used with other filters than it was made for, then 400', async () => {
    const first = await list('?tag=promo&limit=1');
    const cursor = encodeURIComponent(first.body.pagination.nextCursor);
    expect((await list(`?tag=promo&limit=1&cursor=${cursor}`)).status).toBe(200);
    expect(expectEnvelope(await list(`?tag=blog&limit=1&cursor=${cursor}`), 400, 'VALIDATION_ERROR')).toEqual([
      'cursor',
    ]);
    expect(
      expectEnvelope(await list(`?tag=promo&sort=click_count&limit=1&cursor=${cursor}`), 400, 'VALIDATION_ERROR'),
    ).toEqual(['cursor']);
  });

  it('when v2 lists, then camelCase sort values and cursor pages only', async () => {
    expect(codes(await list('?sort=clickCount&order=desc', u.token, 2))).toEqual(at(2, 3, 0, 4, 1));
    expect(await walk('?sort=expiresAt', 2, 2)).toEqual(at(2, 4, 0, 1, 3));
    expectEnvelope(await list('?sort=click_count', u.token, 2), 400, 'VALIDATION_ERROR');
    expectEnvelope(await list('?page=1', u.token, 2), 400, 'VALIDATION_ERROR');
  });

  it('when `me` stands for the user in nested paths, then it is the caller; without a token, 401', async () => {
    const mine = await t.request({ url: '/api/v1/users/me/links?tag=promo', token: u.token });
    expect(mine.status).toBe(200);
    expect(codes(mine)).toEqual(at(0, 2));
    expect(mine.headers.link).toContain('/api/v1/users/me/links?');
    expectEnvelope(await t.request({ url: '/api/v1/users/me/links' }), 401, 'UNAUTHENTICATED');
    expect((await t.request({ url: '/api/v2/users/me/links', token: u.token })).body.data).toHaveLength(5);
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    expect((await t.request({ url: '/api/v1/users/me/links', token: admin.token })).body.data).toEqual([]);
  });

  it("when `me` is used for orders, then the caller's orders and one of them by id; another user's order is 404", async () => {
    const buyer = await createUser(t, { status: 'active' });
    const order = await t.request({
      method: 'POST',
      url: '/api/v1/orders',
      token: buyer.token,
      headers: { 'idempotency-key': randomUUID() },
      payload: { itemId: 7, quantity: 2 },
    });
    expect(order.status).toBe(201);
    const listed = await t.request({ url: '/api/v1/users/me/orders', token: buyer.token });
    expect(listed.body.data.map((o: { id: number }) => o.id)).toEqual([order.body.id]);
    const one = await t.request({ url: `/api/v1/users/me/orders/${order.body.id}`, token: buyer.token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(order.body);
    expectEnvelope(
      await t.request({ url: `/api/v1/users/me/orders/${order.body.id}`, token: u.token }),
      404,
      'NOT_FOUND',
    );
    expectEnvelope(await t.request({ url: '/api/v1/users/me/orders' }), 401, 'UNAUTHENTICATED');
    // Neither `me` nor a canonical decimal id (SPEC §17): 400 naming the parameter.
    const mine = await t.request({ url: '/api/v1/users/mine/orders', token: buyer.token });
    expectEnvelope(mine, 400, 'VALIDATION_ERROR');
    expect(mine.body.error.details.map((d: { field: string }) => d.field)).toEqual(['id']);
  });
});
