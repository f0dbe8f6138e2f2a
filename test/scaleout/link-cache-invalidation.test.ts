import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';
import { scaleOut, waitFor } from '../helpers/scale-out.js';

/** Two API instances on one PostgreSQL database and one Redis (one key prefix): what one deletes, both forget. */
describe.runIf(scaleOut)('redirect cache invalidation across instances', () => {
  let a: TestApp;
  let b: TestApp;
  let admin: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    // Two instances in one test process share one event loop (never so in production): one's start-up
    // would count as the other's overload, so load shedding is off here.
    const env = { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' };
    a = await createTestApp('postgres', { env });
    b = await createTestApp('postgres', { env, databaseUrl: a.config.databaseUrl!, redisPrefix: a.redisPrefix });
    admin = await createUser(a, { role: 'admin', status: 'active' });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const visit = async (t: TestApp, code: string) => (await t.app.inject({ url: `/${code}` })).statusCode;
  const create = async (t: TestApp, payload: Record<string, unknown> = {}) =>
    (await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/shared', ...payload } })).body as { short_code: string };

  it('when one instance deletes a link that the other has cached, then the other stops redirecting within a second', async () => {
    const link = await create(a);
    expect(await visit(b, link.short_code)).toBe(302); // b caches it (for 30 s without invalidation)
    expect(await visit(b, link.short_code)).toBe(302);
    expect((await a.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: admin.token })).status).toBe(204);
    const deletedAt = Date.now();
    await waitFor('b to forget the deleted link', async () => (await visit(b, link.short_code)) === 404, 1_000);
    expect(Date.now() - deletedAt).toBeLessThan(1_000);
    expect(await visit(a, link.short_code)).toBe(404);
  });

  it('when one instance creates a custom code the other has cached as missing, then the other redirects it within a second', async () => {
    const code = `c${Math.random().toString(36).slice(2, 8)}`;
    expect(await visit(b, code)).toBe(404); // a cached miss (5 s without invalidation)
    await create(a, { short_code: code });
    await waitFor('b to forget its cached miss', async () => (await visit(b, code)) === 302, 1_000);
  });

  it('when an invalidation message is lost, then the cache TTL still bounds how long a deleted link redirects', async () => {
    // A change that sends no message at all, as when a message is lost: only the TTL bounds b's copy.
    const link = await create(a);
    expect(await visit(b, link.short_code)).toBe(302);
    await a.storage.db.updateTable('links').set({ original_url: 'https://example.com/changed' }).where('short_code', '=', link.short_code).execute();
    b.clock.advance(29_000);
    expect((await b.app.inject({ url: `/${link.short_code}` })).headers.location).toBe('https://example.com/shared');
    b.clock.advance(1_000); // the 30 s positive TTL
    expect((await b.app.inject({ url: `/${link.short_code}` })).headers.location).toBe('https://example.com/changed');
  });

  it('when the messages go over Redis, then they are on a channel under the key prefix', async () => {
    const listener = new Redis(process.env.TEST_REDIS_URL!);
    const received: string[] = [];
    await listener.subscribe(`${a.redisPrefix}link-cache`);
    listener.on('message', (_channel: string, message: string) => received.push(message));
    const link = await create(a);
    expect((await a.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: admin.token })).status).toBe(204);
    await waitFor('the invalidation message', async () => received.some((m) => m.endsWith(` ${link.short_code}`)), 1_000);
    await listener.quit();
  });
});
