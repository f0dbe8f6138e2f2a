import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uniqueName } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * The API's rate limits counted in Redis (the scale-out setup, plugins/rate-limit.ts): every key names its
 * policy and its caller under REDIS_KEY_PREFIX, and nothing else (the plugin's store would put the route of a
 * limiter there, and Ferry's limiters have none: `ratelimit:undefinedundefined-default:ip:…`).
 */
describe.skipIf(missing.scaleOut !== null)(unless(missing.scaleOut, 'rate-limit keys in Redis'), () => {
  let t: TestApp;
  let redis: Redis;
  beforeAll(async () => {
    t = await createTestApp('postgres');
    redis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await t?.close();
  });

  it('when the API counts requests in Redis, then each key is <prefix>ratelimit:<policy>:<caller>, none holds "undefined"', async () => {
    const ip = '198.51.100.77';
    expect((await t.request({ url: '/api/v1/links/nOsUch77', remoteAddress: ip })).status).toBe(404);
    const username = uniqueName('rk');
    await t.request({
      method: 'POST',
      url: '/api/v1/tokens',
      remoteAddress: ip,
      payload: { username, password: 'not-the-password-1' },
    });
    const keys = (await redis.keys(`${t.redisPrefix}*`)).map((k) => k.slice(t.redisPrefix.length));
    expect(keys.filter((k) => k.includes('undefined'))).toEqual([]);
    expect(keys).toEqual(
      expect.arrayContaining([
        `ratelimit:default:ip:${ip}`,
        `ratelimit:tokens-ip:ip:${ip}`,
        `ratelimit:tokens-username:username:${username.toLowerCase()}`,
      ]),
    );
  });
});
