import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { countKeys, countOrders, ORDERS, postOrder } from './orders.helpers.js';

describe.each(engines)('POST /api/v1/orders on %s', (engine) => {
  const t = useTestApp(engine);

  it('when an active user orders, then 201 with Location and the record, owned by the caller', async () => {
    const u = await createUser(t, { status: 'active' });
    const res = await postOrder(t, u, { itemId: 42, quantity: 3 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      userId: u.id,
      itemId: 42,
      quantity: 3,
      createdAt: new Date(t.clock.now()).toISOString(),
    });
    expect(res.headers.location).toBe(`/api/v1/users/${u.id}/orders/${res.body.id}`);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    const got = await t.request({ url: String(res.headers.location), token: u.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('when the Idempotency-Key header is missing, then 400 naming it and no order', async () => {
    const u = await createUser(t, { status: 'active' });
    const res = await postOrder(t, u, { itemId: 1, quantity: 1 }, null);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details[0].field).toBe('Idempotency-Key');
    expect(await countOrders(t, u.id)).toBe(0);
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['a non-ASCII character', 'clé-1'],
    ['a control character', 'key\u0001x'],
  ])('when the Idempotency-Key has %s, then 400 naming it', async (_what, key) => {
    const u = await createUser(t, { status: 'active' });
    const res = await t.request({
      method: 'POST',
      url: ORDERS,
      token: u.token,
      payload: { itemId: 1, quantity: 1 },
      headers: { 'idempotency-key': key },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('Idempotency-Key');
    expect(await countOrders(t, u.id)).toBe(0);
  });

  it('when the Idempotency-Key is 255 printable ASCII characters with spaces and symbols, then it is accepted', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = ('a b~!"#$%&()*+,-./:;<=>?@[]^_`{|}' + 'x'.repeat(255)).slice(0, 255);
    const res = await postOrder(t, u, { itemId: 1, quantity: 1 }, key);
    expect(res.status).toBe(201);
    expect((await postOrder(t, u, { itemId: 1, quantity: 1 }, key)).headers['idempotent-replayed']).toBe('true');
  });

  it('when the Idempotency-Key header is sent twice, then 400 naming it', async () => {
    const u = await createUser(t, { status: 'active' });
    const res = await t.app.inject({
      method: 'POST',
      url: ORDERS,
      payload: JSON.stringify({ itemId: 1, quantity: 1 }),
      headers: {
        authorization: `Bearer ${u.token}`,
        'content-type': 'application/json',
        'idempotency-key': ['k1', 'k2'],
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details[0].field).toBe('Idempotency-Key');
    expect(await countOrders(t, u.id)).toBe(0);
  });

  it('when the body is invalid, then 400 with every offending field, and the same key then works for a valid body (no replay)', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const bad = await postOrder(t, u, { itemId: 0, quantity: 1001, colour: 'red' }, key);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'colour',
      'itemId',
      'quantity',
    ]);
    expect(await countKeys(t, u.id)).toBe(0);
    const ok = await postOrder(t, u, { itemId: 5, quantity: 2 }, key);
    expect(ok.status).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
    expect(await countOrders(t, u.id)).toBe(1);
  });

  it.each([
    ['a string quantity', { itemId: 1, quantity: '2' }],
    ['a fractional item id', { itemId: 1.5, quantity: 2 }],
    ['quantity 0', { itemId: 1, quantity: 0 }],
    ['no item id', { quantity: 1 }],
  ])('when the body has %s, then 400 VALIDATION_ERROR', async (_what, payload) => {
    const u = await createUser(t, { status: 'active' });
    const res = await postOrder(t, u, payload);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('when there is no token, then 401, and the key is left unused for the authenticated retry', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const anon = await postOrder(t, { token: '' }, { itemId: 1, quantity: 1 }, key);
    expect(anon.status).toBe(401);
    const ok = await postOrder(t, u, { itemId: 1, quantity: 1 }, key);
    expect(ok.status).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
  });

  it('when the body is not JSON, then 415 and the key stays unused', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const res = await t.request({
      method: 'POST',
      url: ORDERS,
      token: u.token,
      headers: { 'idempotency-key': key, 'content-type': 'text/plain' },
      payload: 'itemId=1',
    });
    expect(res.status).toBe(415);
    expect(await countKeys(t, u.id)).toBe(0);
    expect((await postOrder(t, u, { itemId: 1, quantity: 1 }, key)).status).toBe(201);
  });

  it('when a pending user orders, then 422 ACCOUNT_NOT_ACTIVE, nothing is stored, and once active the same key creates the order', async () => {
    const u = await createUser(t, { status: 'pending' });
    const key = randomUUID();
    const res = await postOrder(t, u, { itemId: 7, quantity: 1 }, key);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('ACCOUNT_NOT_ACTIVE');
    expect(await countOrders(t, u.id)).toBe(0);
    expect(await countKeys(t, u.id)).toBe(0);
    await t.storage.db.updateTable('users').set({ status: 'active' }).where('id', '=', u.id).execute();
    const ok = await postOrder(t, u, { itemId: 7, quantity: 1 }, key);
    expect(ok.status).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
  });

  it('when a suspended user tries to order, then 401 (their tokens stop working) and nothing is stored', async () => {
    const u = await createUser(t, { status: 'active' });
    await t.storage.db.updateTable('users').set({ status: 'suspended' }).where('id', '=', u.id).execute();
    const res = await postOrder(t, u, { itemId: 7, quantity: 1 });
    expect(res.status).toBe(401);
    expect(await countKeys(t, u.id)).toBe(0);
  });

  it("when the body echoes the caller's own userId and read-only fields, then they are accepted; another user's id is 403", async () => {
    const u = await createUser(t, { status: 'active' });
    const other = await createUser(t, { status: 'active' });
    const own = await postOrder(t, u, {
      itemId: 1,
      quantity: 1,
      userId: u.id,
      id: 5,
      createdAt: '1999-01-01T00:00:00.000Z',
    });
    expect(own.status).toBe(201);
    expect(own.body.userId).toBe(u.id);
    expect(own.body.createdAt).not.toBe('1999-01-01T00:00:00.000Z');
    const theirs = await postOrder(t, u, { itemId: 1, quantity: 1, userId: other.id });
    expect(theirs.status).toBe(403);
    expect(theirs.body.error.details[0].field).toBe('userId');
    expect(await countOrders(t, other.id)).toBe(0);
  });

  it('when a user is deleted, then their orders and stored keys are deleted with them', async () => {
    const u = await createUser(t, { status: 'active' });
    await postOrder(t, u, { itemId: 1, quantity: 1 });
    await postOrder(t, u, { itemId: 2, quantity: 1 });
    expect(await countOrders(t, u.id)).toBe(2);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${u.id}`, token: u.token })).status).toBe(204);
    expect(await countOrders(t, u.id)).toBe(0);
    expect(await countKeys(t, u.id)).toBe(0);
  });

  it('when GET carries an Idempotency-Key, then it is ignored', async () => {
    const u = await createUser(t, { status: 'active' });
    const res = await t.request({
      url: `/api/v1/users/${u.id}/orders`,
      token: u.token,
      headers: { 'idempotency-key': 'whatever' },
    });
    expect(res.status).toBe(200);
  });
});
