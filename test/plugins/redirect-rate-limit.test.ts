import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import errorsPlugin from '../../src/plugins/errors.js';
import { LocalIpLimiter, registerRedirectRateLimit } from '../../src/plugins/redirect-limit.js';
import { TestClock } from '../helpers/app.js';

/**
 * The preset the redirect's owner registers in its own root-level context. Shown on a stand-in route with the
 * redirect's template, since the redirect itself lives in another module.
 */
describe('redirect rate limit preset', () => {
  it('when one address follows more redirects than REDIRECT_RATE_LIMIT_PER_MINUTE, then 429 with the redirect policy; other addresses and sibling contexts are unaffected', async () => {
    const app = Fastify({ trustProxy: false });
    await app.register(errorsPlugin, { clock: new TestClock() });
    await app.register(async (redirect) => {
      registerRedirectRateLimit(redirect, new LocalIpLimiter('redirect', 3));
      redirect.get('/:code', async (_request, reply) => reply.redirect('https://example.com/', 302));
    });
    app.get('/healthz', async () => ({ status: 'ok' }));

    const visit = (ip: string) => app.inject({ url: '/abc', remoteAddress: ip });
    const first = await visit('192.0.2.1');
    expect(first.statusCode).toBe(302);
    expect(first.headers['ratelimit-policy']).toBe('"redirect";q=3;w=60');
    expect(first.headers.ratelimit).toMatch(/^"redirect";r=2;t=\d+$/);
    expect((await visit('192.0.2.1')).statusCode).toBe(302);
    expect((await visit('192.0.2.1')).statusCode).toBe(302);
    const limited = await visit('192.0.2.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(limited.headers.location).toBeUndefined();

    expect((await visit('192.0.2.2')).statusCode).toBe(302);
    const sibling = await app.inject({ url: '/healthz', remoteAddress: '192.0.2.1' });
    expect(sibling.statusCode).toBe(200);
    expect(sibling.headers).not.toHaveProperty('ratelimit');
    await app.close();
  });
});
