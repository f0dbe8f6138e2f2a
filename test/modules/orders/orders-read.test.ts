import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser, type CreatedUser } from '../../helpers/factories.js';
import { postOrder } from './orders.helpers.js';

describe.each(engines)('GET /api/v1/users/{id}/orders on %s', (engine) => {
  const t = useTestApp(engine);

  /** Places orders with the given item ids and quantities, one clock tick apart. */
  async function placeOrders(u: CreatedUser, items: Array<[itemId: number, quantity: number]>): Promise<number[]> {
    const ids: number[] = [];
    for (const [itemId, quantity] of items) {
      const res = await postOrder(t, u, { itemId, quantity });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
      t.clock.advance(1);
    }
    return ids;
  }

  describe('authorization (BOLA)', () => {
    it("when user B reads user A's orders by either path, then 403 and none of A's data; an admin reads them", async () => {
      const a = await createUser(t, { status: 'active' });
      const b = await createUser(t, { status: 'active' });
      const admin = await createUser(t, { role: 'admin', status: 'active' });
      const [orderId] = await placeOrders(a, [[1, 1]]);
      for (const url of [`/api/v1/users/${a.id}/orders`, `/api/v1/users/${a.id}/orders/${orderId}`]) {
        const res = await t.request({ url, token: b.token });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
        expect(res.text).not.toContain(`"itemId"`);
        expect((await t.request({ url, token: admin.token })).status).toBe(200);
        expect((await t.request({ url })).status).toBe(401);
      }
    });

    it("when user B asks for A's order under B's own path, then 404 (the order is not B's)", async () => {
      const a = await createUser(t, { status: 'active' });
      const b = await createUser(t, { status: 'active' });
      const [orderId] = await placeOrders(a, [[1, 1]]);
      const res = await t.request({ url: `/api/v1/users/${b.id}/orders/${orderId}`, token: b.token });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
      const list = await t.request({ url: `/api/v1/users/${b.id}/orders`, token: b.token });
      expect(list.body.data).toEqual([]);
    });

    it("when an admin asks for A's order under B's path, then 404; under A's path, then the order", async () => {
      const a = await createUser(t, { status: 'active' });
      const b = await createUser(t, { status: 'active' });
      const admin = await createUser(t, { role: 'admin', status: 'active' });
      const [orderId] = await placeOrders(a, [[4, 2]]);
      expect((await t.request({ url: `/api/v1/users/${b.id}/orders/${orderId}`, token: admin.token })).status).toBe(
        404,
      );
      const own = await t.request({ url: `/api/v1/users/${a.id}/orders/${orderId}`, token: admin.token });
      expect(own.status).toBe(200);
      expect(own.body).toMatchObject({ id: orderId, userId: a.id, itemId: 4, quantity: 2 });
    });

    it('when an admin lists the orders of a user that does not exist, then 404; an unknown order id is 404', async () => {
      const u = await createUser(t, { status: 'active' });
      const admin = await createUser(t, { role: 'admin', status: 'active' });
      expect((await t.request({ url: '/api/v1/users/987654321/orders', token: admin.token })).status).toBe(404);
      expect((await t.request({ url: `/api/v1/users/${u.id}/orders/987654321`, token: u.token })).status).toBe(404);
    });

    it('when an order id is not a positive integer, then 400', async () => {
      const u = await createUser(t, { status: 'active' });
      const res = await t.request({ url: `/api/v1/users/${u.id}/orders/abc`, token: u.token });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('order_id');
    });
  });

  describe('reading', () => {
    it('when an order is read, then 200 with ETag and private caching, and If-None-Match gives 304', async () => {
      const u = await createUser(t, { status: 'active' });
      const [id] = await placeOrders(u, [[3, 3]]);
      const res = await t.request({ url: `/api/v1/users/${u.id}/orders/${id}`, token: u.token });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toMatch(/^private/);
      const again = await t.request({
        url: `/api/v1/users/${u.id}/orders/${id}`,
        token: u.token,
        headers: { 'if-none-match': String(res.headers.etag) },
      });
      expect(again.status).toBe(304);
    });
  });

  describe('pagination, sorting and filtering', () => {
    it('when paging, then totals, pages and the Link header are right', async () => {
      const u = await createUser(t, { status: 'active' });
      const ids = await placeOrders(u, [
        [1, 1],
        [2, 2],
        [3, 3],
        [4, 4],
        [5, 5],
      ]);
      const p1 = await t.request({ url: `/api/v1/users/${u.id}/orders?limit=2`, token: u.token });
      expect(p1.status).toBe(200);
      expect(p1.body.data.map((o: { id: number }) => o.id)).toEqual(ids.slice(0, 2));
      expect(p1.body.pagination).toMatchObject({
        page: 1,
        limit: 2,
        total: 5,
        totalPages: 3,
        nextCursor: expect.any(String),
      });
      expect(p1.headers.link).toContain(`</api/v1/users/${u.id}/orders?limit=2&page=2>; rel="next"`);
      expect(p1.headers.link).toContain('rel="first"');
      const p3 = await t.request({ url: `/api/v1/users/${u.id}/orders?limit=2&page=3`, token: u.token });
      expect(p3.body.data.map((o: { id: number }) => o.id)).toEqual(ids.slice(4));
      expect(p3.body.pagination.nextCursor).toBeNull();
      expect(p3.headers.link).toContain('rel="prev"');
      expect(p3.headers.link).not.toContain('rel="next"');
    });

    it('when walking with cursors (sorted by quantity, descending), then every order comes exactly once, in order, unshifted by inserts', async () => {
      const u = await createUser(t, { status: 'active' });
      const quantities = [5, 3, 5, 1, 3, 5, 2, 4, 1, 5, 3];
      const ids = await placeOrders(
        u,
        quantities.map((q, i) => [i + 1, q]),
      );
      const byQuantityDesc = ids
        .map((id, i) => ({ id, quantity: quantities[i]! }))
        .sort((x, y) => y.quantity - x.quantity || y.id - x.id);
      const seen: number[] = [];
      let url: string | null = `/api/v1/users/${u.id}/orders?sort=quantity&order=desc&limit=3`;
      let pages = 0;
      while (url) {
        const res = await t.request({ url, token: u.token });
        expect(res.status).toBe(200);
        if (pages > 0) expect(res.body.pagination).not.toHaveProperty('total');
        seen.push(...res.body.data.map((o: { id: number }) => o.id));
        // After the first page, a new order sorts before the cursor: a keyset walk neither repeats nor skips because of it.
        if (pages === 0) await placeOrders(u, [[99, 5]]);
        pages += 1;
        const next: string | null = res.body.pagination.nextCursor;
        if (next) expect(res.headers.link).toContain('rel="next"');
        url = next
          ? `/api/v1/users/${u.id}/orders?sort=quantity&order=desc&limit=3&cursor=${encodeURIComponent(next)}`
          : null;
      }
      expect(pages).toBe(4);
      expect(seen).toEqual(byQuantityDesc.map((o) => o.id));
    });

    it('when filtering by itemId and sorting by itemId or createdAt, then only matching orders in that order', async () => {
      const u = await createUser(t, { status: 'active' });
      const ids = await placeOrders(u, [
        [7, 1],
        [3, 1],
        [7, 2],
        [5, 1],
      ]);
      const filtered = await t.request({ url: `/api/v1/users/${u.id}/orders?itemId=7`, token: u.token });
      expect(filtered.body.data.map((o: { id: number }) => o.id)).toEqual([ids[0], ids[2]]);
      expect(filtered.body.pagination.total).toBe(2);
      const byItem = await t.request({ url: `/api/v1/users/${u.id}/orders?sort=itemId`, token: u.token });
      expect(byItem.body.data.map((o: { itemId: number }) => o.itemId)).toEqual([3, 5, 7, 7]);
      const byTime = await t.request({ url: `/api/v1/users/${u.id}/orders?sort=createdAt&order=desc`, token: u.token });
      expect(byTime.body.data.map((o: { id: number }) => o.id)).toEqual([...ids].reverse());
    });

    it.each([
      ['an unknown sort field', 'sort=price', 'sort'],
      ['a bad direction', 'order=up', 'order'],
      ['a limit over 100', 'limit=101', 'limit'],
      ['a bad itemId', 'itemId=0', 'itemId'],
    ])('when the query has %s, then 400 naming it', async (_what, query, field) => {
      const u = await createUser(t, { status: 'active' });
      const res = await t.request({ url: `/api/v1/users/${u.id}/orders?${query}`, token: u.token });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('when a cursor is tampered with, reused with another filter, or combined with page, then 400', async () => {
      const u = await createUser(t, { status: 'active' });
      await placeOrders(u, [
        [1, 1],
        [1, 2],
        [2, 3],
      ]);
      const p = await t.request({ url: `/api/v1/users/${u.id}/orders?limit=1`, token: u.token });
      const cursor: string = p.body.pagination.nextCursor;
      const [body, mac] = cursor.split('.');
      const forged = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), i: 0 }),
      ).toString('base64url');
      for (const query of [
        `cursor=${forged}.${mac}`,
        `cursor=${encodeURIComponent(cursor)}&itemId=1`,
        `cursor=${encodeURIComponent(cursor)}&page=2`,
        'cursor=garbage',
      ]) {
        const res = await t.request({ url: `/api/v1/users/${u.id}/orders?limit=1&${query}`, token: u.token });
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe('cursor');
      }
    });
  });
});
