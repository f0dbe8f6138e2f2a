import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import errorsPlugin from '../../src/plugins/errors.js';
import { closeRedis, whenRedisReady } from '../../src/infra/redis.js';
import { RedisTurn } from '../../src/infra/redis-turn.js';
import { registerRedirectRateLimit, SharedIpLimiter } from '../../src/plugins/redirect-limit.js';
import { TestClock } from '../helpers/app.js';
import { missing, unless } from '../helpers/skip.js';

/** An instance with the redirect's limit in Redis, on a stand-in route with the redirect's template. */
async function instance(
  redis: Redis,
  prefix: string,
  perMinute: number,
  { reachable = true } = {},
): Promise<FastifyInstance> {
  const turn = new RedisTurn(redis);
  if (reachable) await whenRedisReady(turn.redis);
  const app = Fastify({ trustProxy: false });
  app.addHook('onClose', async () => closeRedis(turn.redis));
  await app.register(errorsPlugin, { clock: new TestClock() });
  await app.register(async (scope) => {
    registerRedirectRateLimit(scope, new SharedIpLimiter('redirect', perMinute, turn, prefix));
    scope.get('/:code', async (_request, reply) => reply.redirect('https://example.com/', 302));
  });
  return app;
}

/**
 * The redirect's limit in the scale-out setup (plugins/redirect-limit.ts SharedIpLimiter): instances draw on one
 * quota per address, a turn's requests from one address are counted with one increment and each gets its own
 * place in the count, and a Redis that does not answer lets requests through.
 */
describe.skipIf(missing.redis !== null)(unless(missing.redis, 'the redirect limit shared through Redis'), () => {
  let redis: Redis;
  const prefix = `test-${randomUUID()}:`;
  beforeAll(async () => {
    redis = new Redis(process.env.TEST_REDIS_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    await new Promise((resolve) => redis.once('ready', resolve));
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('when one address alternates between two instances, then they draw on one quota: 302, 302, 302, 429 with the redirect policy', async () => {
    const [a, b] = [await instance(redis, prefix, 3), await instance(redis, prefix, 3)];
    const ip = '192.0.2.10';
    const answers = [];
    for (const app of [a, b, a, b]) answers.push(await app.inject({ url: '/abc', remoteAddress: ip }));
    expect(answers.map((r) => r.statusCode)).toEqual([302, 302, 302, 429]);
    expect(answers.map((r) => r.headers['ratelimit-policy'])).toEqual(Array(4).fill('"redirect";q=3;w=60'));
    expect(answers.map((r) => String(r.headers.ratelimit).replace(/;t=\d+$/, ''))).toEqual([
      '"redirect";r=2',
      '"redirect";r=1',
      '"redirect";r=0',
      '"redirect";r=0',
    ]);
    const limited = answers[3]!;
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers.location).toBeUndefined();
    // The key @fastify/rate-limit's Redis store gives the same policy, expiring with its window.
    expect(await redis.get(`${prefix}ratelimit:redirect:ip:${ip}`)).toBe('4');
    const ttl = await redis.pttl(`${prefix}ratelimit:redirect:ip:${ip}`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // Another address is untouched.
    expect((await a.inject({ url: '/abc', remoteAddress: '192.0.2.11' })).statusCode).toBe(302);
    await Promise.all([a.close(), b.close()]);
  });

  it('when seven requests from one address arrive in one turn, then one count serves them all: the first five pass, in order, and two get 429', async () => {
    const app = await instance(redis, prefix, 5);
    const ip = '2001:db8:1:2::7';
    const answers = await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        app.inject({ url: '/abc', remoteAddress: i % 2 === 0 ? ip : '2001:db8:1:2::8' }),
      ),
    );
    expect(answers.map((r) => r.statusCode).sort()).toEqual([302, 302, 302, 302, 302, 429, 429]);
    const remaining = answers
      .filter((r) => r.statusCode === 302)
      .map((r) => /;r=(\d+);/.exec(String(r.headers.ratelimit))![1])
      .sort();
    expect(remaining).toEqual(['0', '1', '2', '3', '4']);
    // Both addresses are in one /64: one key, counted once per request.
    expect(await redis.get(`${prefix}ratelimit:redirect:ip:2001:db8:1:2::`)).toBe('7');
    await app.close();
  });

  it('when Redis does not answer, then redirects pass with the whole quota shown (fail open), as the API limits do', async () => {
    const down = new Redis({
      host: '127.0.0.1',
      port: 1,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    const app = await instance(down, prefix, 3, { reachable: false });
    for (let i = 0; i < 4; i += 1) {
      const r = await app.inject({ url: '/abc', remoteAddress: '192.0.2.12' });
      expect(r.statusCode).toBe(302);
      expect(r.headers.ratelimit).toBe('"redirect";r=3;t=1');
    }
    await app.close();
    down.disconnect();
  });
});
