import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createIdempotencyRepository } from '../../../src/modules/idempotency/idempotency.repository.js';
import {
  createIdempotencyService,
  DEFAULT_LOCK_TIMEOUT_MS,
} from '../../../src/modules/idempotency/idempotency.service.js';
import { requestFingerprint } from '../../../src/lib/request-fingerprint.js';
import { createTestApp, engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { countKeys, countOrders, ORDERS, postOrder } from './orders.helpers.js';

const TTL_SECONDS = 600;

describe.each(engines)('Idempotency-Key on POST /api/v1/orders on %s', (engine) => {
  const t = useTestApp(engine, { env: { IDEMPOTENCY_TTL_SECONDS: String(TTL_SECONDS) } });

  /** The layer's own service, on the app's database and clock: stands in for another process holding a key. */
  const otherProcess = () =>
    createIdempotencyService({
      repo: createIdempotencyRepository(t.storage.db),
      clock: t.clock,
      ttlSeconds: TTL_SECONDS,
    });
  const fingerprintOf = (body: unknown) =>
    requestFingerprint({ method: 'POST', route: ORDERS, params: {}, query: {}, body });

  it('when the same request is retried with the same key, then the stored 201, Location and body come back with Idempotent-Replayed and no second order', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const first = await postOrder(t, u, { itemId: 9, quantity: 4 }, key);
    expect(first.status).toBe(201);
    t.clock.advance(1000);
    const again = await postOrder(t, u, { quantity: 4, itemId: 9 }, key); // same JSON, other key order
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.body).toEqual(first.body);
    expect(await countOrders(t, u.id)).toBe(1);
  });

  it('when the same key comes with another body, then 422 IDEMPOTENCY_KEY_REUSED and no second order', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    expect((await postOrder(t, u, { itemId: 1, quantity: 1 }, key)).status).toBe(201);
    const other = await postOrder(t, u, { itemId: 1, quantity: 2 }, key);
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(other.body.error.details[0].field).toBe('Idempotency-Key');
    expect(await countOrders(t, u.id)).toBe(1);
  });

  it('when two users send the same key, then each gets their own order (keys are scoped to the caller)', async () => {
    const a = await createUser(t, { status: 'active' });
    const b = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const ra = await postOrder(t, a, { itemId: 3, quantity: 1 }, key);
    const rb = await postOrder(t, b, { itemId: 3, quantity: 1 }, key);
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(rb.headers['idempotent-replayed']).toBeUndefined();
    expect(rb.body.id).not.toBe(ra.body.id);
    expect(rb.body.userId).toBe(b.id);
    expect(await countOrders(t, a.id)).toBe(1);
    expect(await countOrders(t, b.id)).toBe(1);
  });

  it('when 50 requests with one key arrive at once, then exactly one order exists and every answer is 201 (the one result) or 409 with Retry-After', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => postOrder(t, u, { itemId: 77, quantity: 5 }, key)),
    );
    const statuses = new Set(responses.map((r) => r.status));
    expect([...statuses].every((s) => s === 201 || s === 409)).toBe(true);
    const created = responses.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect(created.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    for (const r of responses.filter((x) => x.status === 409)) {
      expect(r.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(await countOrders(t, u.id)).toBe(1);
    const replay = await postOrder(t, u, { itemId: 77, quantity: 5 }, key);
    expect(replay.status).toBe(201);
    expect(replay.body.id).toBe(created[0]!.body.id);
  });

  it('when 50 requests with 50 different keys arrive at once, then 50 orders are created', async () => {
    const u = await createUser(t, { status: 'active' });
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => postOrder(t, u, { itemId: i + 1, quantity: 1 })),
    );
    expect(responses.every((r) => r.status === 201)).toBe(true);
    expect(await countOrders(t, u.id)).toBe(50);
  });

  it('when the key is held by a request still in flight, then 409 IDEMPOTENCY_KEY_IN_USE with Retry-After and no order', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const body = { itemId: 11, quantity: 1 };
    const held = await otherProcess().claim({
      scope: `user:${u.id}`,
      key,
      userId: u.id,
      fingerprint: fingerprintOf(body),
    });
    expect(held.kind).toBe('claimed');
    const res = await postOrder(t, u, body, key);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(res.headers['retry-after']).toBe('1');
    expect(await countOrders(t, u.id)).toBe(0);
  });

  it('when the request holding a key died, then the lock is released after the bound and the stale holder can no longer complete', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const body = { itemId: 12, quantity: 2 };
    const zombie = await otherProcess().claim({
      scope: `user:${u.id}`,
      key,
      userId: u.id,
      fingerprint: fingerprintOf(body),
    });
    if (zombie.kind !== 'claimed') throw new Error('expected a claim');
    t.clock.advance(DEFAULT_LOCK_TIMEOUT_MS - 1000);
    expect((await postOrder(t, u, body, key)).status).toBe(409);
    t.clock.advance(2000);
    const res = await postOrder(t, u, body, key);
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    // The dead request, had it woken up, cannot store its result: its transaction (and its order) roll back.
    const late = t.storage.db
      .transaction()
      .execute((tx) => otherProcess().complete(zombie.claim, { status: 201, headers: {}, body: {} }, tx));
    await expect(late).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE' });
    expect((await postOrder(t, u, body, key)).body).toEqual(res.body);
    expect(await countOrders(t, u.id)).toBe(1);
  });

  it('when a key is past its TTL, then it is forgotten and the same key creates a new order; just before, it still replays', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    const first = await postOrder(t, u, { itemId: 5, quantity: 1 }, key);
    t.clock.advance(TTL_SECONDS * 1000 - 1);
    const replay = await postOrder(t, u, { itemId: 5, quantity: 1 }, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
    t.clock.advance(1);
    const fresh = await postOrder(t, u, { itemId: 5, quantity: 1 }, key);
    expect(fresh.status).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(await countOrders(t, u.id)).toBe(2);
  });

  it('when the background purge runs, then expired keys are deleted and live ones kept', async () => {
    const u = await createUser(t, { status: 'active' });
    await postOrder(t, u, { itemId: 1, quantity: 1 });
    t.clock.advance(TTL_SECONDS * 1000);
    await postOrder(t, u, { itemId: 2, quantity: 1 });
    expect(await countKeys(t, u.id)).toBe(2);
    expect(await otherProcess().purgeExpired()).toBeGreaterThanOrEqual(1);
    expect(await countKeys(t, u.id)).toBe(1);
  });

  it('when the OpenAPI document is read, then createOrder declares the required Idempotency-Key header, 409, 422 and Idempotent-Replayed', () => {
    const op = (t.contract.doc.paths['/api/v1/orders'] as Record<string, Record<string, unknown>>).post!;
    const params = op.parameters as Array<{
      in: string;
      name: string;
      required?: boolean;
      schema: { maxLength: number };
    }>;
    const header = params.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
    expect(header).toMatchObject({ required: true, schema: { maxLength: 255 } });
    const responses = op.responses as Record<string, { headers?: Record<string, unknown> }>;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['201', '400', '401', '409', '422']));
    expect(Object.keys(responses['201']!.headers ?? {})).toEqual(
      expect.arrayContaining(['Location', 'Idempotent-Replayed']),
    );
    const list = (t.contract.doc.paths['/api/v1/users/{id}/orders'] as Record<string, Record<string, unknown>>).get!;
    expect(JSON.stringify(list.parameters)).not.toContain('idempotency-key');
  });

  it('when a different key order or extra whitespace is all that differs, then it is the same request', async () => {
    const u = await createUser(t, { status: 'active' });
    const key = randomUUID();
    await postOrder(t, u, '{"itemId":8,"quantity":1}', key);
    const again = await postOrder(t, u, '{ "quantity" : 1 ,\n "itemId": 8 }', key);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });
});

describe.each(engines)('Idempotency-Key across a restart on %s', (engine) => {
  it('when the server restarts, then a retry with the same key still returns the first result', async () => {
    const first = await createTestApp(engine);
    const u = await createUser(first, { status: 'active' });
    const key = randomUUID();
    const created = await postOrder(first, u, { itemId: 21, quantity: 3 }, key);
    expect(created.status).toBe(201);
    // Stop the first instance (app and database handle) but keep its data.
    await first.app.close();
    await first.storage.close();
    const second = await createTestApp(engine, {
      dataDir: first.config.dataDir,
      databaseUrl: first.config.databaseUrl ?? undefined,
      clock: first.clock,
    });
    try {
      const replay = await postOrder(second, u, { itemId: 21, quantity: 3 }, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers.location).toBe(created.headers.location);
      expect(replay.body).toEqual(created.body);
      expect(await countOrders(second, u.id)).toBe(1);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
