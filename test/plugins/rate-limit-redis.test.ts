import { randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { missing, unless } from '../helpers/skip.js';

const redisUrl = process.env.TEST_REDIS_URL;

/** The store seam: with a Redis client, instances share their counters (the scale-out setup). */
describe.skipIf(missing.redis !== null)(unless(missing.redis, 'rate limits shared through Redis'), () => {
  let redis: Redis;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    redis = new Redis(redisUrl!, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    await new Promise((resolve) => redis.once('ready', resolve));
    const env = { RATE_LIMIT_PER_MINUTE: '3' };
    a = await createTestApp('sqlite', { env, deps: { rateLimitStore: { redis } } });
    b = await createTestApp('sqlite', { env, deps: { rateLimitStore: { redis } } });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    redis.disconnect();
  });

  it('when one client spreads its requests over two instances, then they draw on one quota', async () => {
    const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const statuses = [];
    for (const t of [a, b, a, b])
      statuses.push((await t.request({ url: '/api/v1/users/1', remoteAddress: ip })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });
});
