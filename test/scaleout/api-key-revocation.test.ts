import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';
import { scaleOut } from '../helpers/scale-out.js';
import { createApiKey, keysUrl } from '../modules/api-keys/api-keys.helpers.js';
import { missing, unless } from '../helpers/skip.js';

/** Two API instances on one PostgreSQL database and one Redis: a key revoked on one is refused by both at once. */
describe.runIf(scaleOut)(unless(missing.scaleOut, 'API keys across instances'), () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const env = { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' };
    a = await createTestApp('postgres', { env });
    b = await createTestApp('postgres', { env, databaseUrl: a.config.databaseUrl!, redisPrefix: a.redisPrefix });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('when a key is revoked on one instance, then the very next request with it is 401 on the other', async () => {
    const u = await createUser(a, { status: 'active' });
    const { id, key } = await createApiKey(a, u, ['users:read']);
    expect((await b.request({ url: '/api/v1/users/me', token: key })).status).toBe(200);
    expect((await b.request({ url: '/api/v1/users/me', token: key })).status).toBe(200);
    expect((await a.request({ method: 'DELETE', url: `${keysUrl(u.id)}/${id}`, token: u.token })).status).toBe(204);
    const refused = await b.request({ url: '/api/v1/users/me', token: key });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('when an instance closes, then the uses it noted are written', async () => {
    const c = await createTestApp('postgres', {
      env: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' },
      databaseUrl: a.config.databaseUrl!,
      redisPrefix: a.redisPrefix,
    });
    const u = await createUser(a, { status: 'active' });
    const { id, key } = await createApiKey(a, u, ['users:read']);
    expect((await c.request({ url: '/api/v1/users/me', token: key })).status).toBe(200);
    await c.close();
    const row = await a.storage.db
      .selectFrom('api_keys')
      .select('last_used_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.last_used_at).toBe(c.clock.now());
  });
});
