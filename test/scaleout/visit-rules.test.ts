import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';
import { scaleOut } from '../helpers/scale-out.js';
import { createLink, HUMAN_UA } from '../modules/links/links.helpers.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * Visit limits and password attempts with two API instances sharing PostgreSQL and Redis, each on its own
 * socket: the limits hold across instances.
 */
describe.runIf(scaleOut)(unless(missing.scaleOut, 'visit rules across two instances'), () => {
  let a: TestApp;
  let b: TestApp;
  const bases: string[] = [];
  beforeAll(async () => {
    const env = { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0', LINK_PASSWORD_ATTEMPTS_PER_MINUTE: '4' };
    a = await createTestApp('postgres', { env });
    b = await createTestApp('postgres', { env, databaseUrl: a.config.databaseUrl!, redisPrefix: a.redisPrefix });
    for (const t of [a, b]) {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      bases.push(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`);
    }
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const hit = async (base: string, code: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/${code}`, { redirect: 'manual', headers: { 'user-agent': HUMAN_UA, ...headers } });
    await res.arrayBuffer();
    return res;
  };

  it('when 50 people visit a max_visits 10 link at once through both instances, then exactly 10 are redirected and 40 get 410', async () => {
    const link = await createLink(a, { max_visits: 10 }, (await createUser(a)).token);
    // Both instances have it cached before the rush.
    for (const base of bases)
      expect((await hit(base, link.short_code, { 'user-agent': 'curl/8.5.0' })).status).toBe(302);
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => (await hit(bases[i % 2]!, link.short_code)).status),
    );
    expect(statuses.filter((s) => s === 302)).toHaveLength(10);
    expect(statuses.filter((s) => s === 410)).toHaveLength(40);
  });

  it('when wrong passwords are tried through both instances, then they add up in Redis to one limit per link and address', async () => {
    const link = await createLink(a, { password: 'right-password-1' }, (await createUser(a)).token);
    const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`x:${password}`).toString('base64')}` });
    const statuses = [];
    for (let i = 0; i < 4; i += 1)
      statuses.push((await hit(bases[i % 2]!, link.short_code, basic(`wrong-${i}`))).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    const limited = await hit(bases[0]!, link.short_code, basic('right-password-1'));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await hit(bases[1]!, link.short_code, basic('right-password-1'))).status).toBe(429);
  });
});
