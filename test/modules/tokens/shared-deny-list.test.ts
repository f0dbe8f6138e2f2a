import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';
import { missing, unless } from '../../helpers/skip.js';

// Scale-out: two instances on one PostgreSQL database and one Redis. The skip is announced by global-setup.
const scaleOut = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

describe.runIf(scaleOut)(unless(missing.scaleOut, 'token revocation shared through Redis'), () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp('postgres');
    b = await createTestApp('postgres', { databaseUrl: a.config.databaseUrl!, redisPrefix: a.redisPrefix });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('when a token is revoked on one instance, then the other instance refuses it at once', async () => {
    const u = await createUser(a);
    expect((await b.request({ url: '/api/v1/users/me', token: u.token })).status).toBe(200);
    expect((await a.request({ method: 'DELETE', url: '/api/v1/tokens/current', token: u.token })).status).toBe(204);
    const after = await b.request({ url: '/api/v1/users/me', token: u.token });
    expect(after.status).toBe(401);
    expect(after.headers['www-authenticate']).toContain('error="invalid_token"');
    // The revocation lives in Redis (not only in the shared database) and expires with the token.
    const redis = new Redis(process.env.TEST_REDIS_URL!);
    const keys = await redis.keys(`${a.redisPrefix}revoked:*`);
    expect(keys).toHaveLength(1);
    const ttl = await redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3600_000);
    expect(await a.storage.db.selectFrom('revoked_tokens').selectAll().execute()).toEqual([]);
    await redis.quit();
  });
});
