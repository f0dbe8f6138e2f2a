import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryAttemptLimiter } from '../../../src/infra/attempt-limiter.js';
import { Paginator } from '../../../src/lib/pagination.js';
import { DEFAULT_LINK_CACHE, LinkCache } from '../../../src/modules/redirect/link-cache.js';
import { createLinksRepository } from '../../../src/modules/links/links.repository.js';
import { createLinksService } from '../../../src/modules/links/links.service.js';
import { createPasswordHasher } from '../../../src/modules/users/password.js';
import { createUsersRepository } from '../../../src/modules/users/users.repository.js';
import { createTestApp, engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/scale-out.js';
import { clickRecords, createLink, createUser } from '../../helpers/factories.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

describe.each(engines)('redirect GET /{code} on %s', (engine) => {
  const t = useTestApp(engine, { env: { CORS_ORIGINS: '*' } });

  it('when a code is visited, then 302 to exactly the stored URL with Cache-Control private, no-store, and no body', async () => {
    const url = "https://example.com/a/b?q=%20x&y=|^~'()*!$,;=:@";
    const link = await createLink(t, { original_url: url });
    const res = await t.request({ url: `/${link.short_code}`, headers: { origin: 'https://else.example' } });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(url);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['x-request-id']).toBeDefined();
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.text).toBe('');
  });

  it('when a code is visited, then one click is recorded with time, ip, user agent and referrer', async () => {
    const link = await createLink(t);
    await t.request({
      url: `/${link.short_code}`,
      headers: { 'user-agent': 'UA/1.0', referer: 'https://news.example/item?id=1' },
    });
    const clicks = await clickRecords(t, link.id);
    expect(clicks).toEqual([
      expect.objectContaining({
        link_id: link.id,
        short_code: link.short_code,
        clicked_at: t.clock.now(),
        ip: '127.0.0.1',
        user_agent: 'UA/1.0',
        referrer: 'https://news.example/item?id=1',
      }),
    ]);
  });

  it('when HEAD is sent, then the same status and headers and no click', async () => {
    const link = await createLink(t);
    const res = await t.request({ method: 'HEAD', url: `/${link.short_code}` });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://example.com/x');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(await clickRecords(t, link.id)).toHaveLength(0);
  });

  it('when a code is unknown, then 404 NOT_FOUND as the envelope, or as a small HTML page for a browser', async () => {
    const json = await t.request({ url: '/nOsUch12' });
    expect(json.status).toBe(404);
    expect(json.body.error.code).toBe('NOT_FOUND');
    expect(json.headers.vary).toMatch(/Accept/);
    const any = await t.request({ url: '/nOsUch12', headers: { accept: '*/*' } });
    expect(any.headers['content-type']).toMatch(/^application\/json/);
    const html = await t.request({ url: '/nOsUch12', headers: { accept: BROWSER_ACCEPT } });
    expect(html.status).toBe(404);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.text).toMatch(/<title>Link not found<\/title>/);
    expect(html.headers['content-security-policy']).toContain("default-src 'none'");
    const jsonPreferred = await t.request({
      url: '/nOsUch12',
      headers: { accept: 'text/html;q=0.5, application/json' },
    });
    expect(jsonPreferred.headers['content-type']).toMatch(/^application\/json/);
  });

  it('when a path is not a possible code, then the ordinary 404 envelope', async () => {
    for (const path of ['/has-dash', '/waytoolong9', '/a.b']) {
      const res = await t.request({ url: path });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('when a code is visited and then deleted, then the cached redirect is dropped: 404 at once', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const link = await createLink(t);
    expect((await t.request({ url: `/${link.short_code}` })).status).toBe(302);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: admin.token })).status,
    ).toBe(204);
    expect((await t.request({ url: `/${link.short_code}` })).status).toBe(404);
  });

  it('when an unknown code was visited and is then created, then it redirects at once (negative entry dropped)', async () => {
    expect((await t.request({ url: '/Later42' })).status).toBe(404);
    await createLink(t, { short_code: 'Later42', original_url: 'https://example.com/later' });
    const res = await t.request({ url: '/Later42' });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://example.com/later');
  });

  // Every change to a link goes through this process's cache on the embedded database (one process per file),
  // so a warm cache stays warm; a shared database may be changed by other instances, so entries are re-read:
  // the visit that finds its entry past the TTL is still answered from it, and asks for the re-read that the
  // visits after it see (stale-while-revalidate, docs/architecture.md).
  it('when a cached link is older than the cross-instance TTL, then SQLite still serves it from memory; PostgreSQL reads it again', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/before' });
    expect((await t.request({ url: `/${link.short_code}` })).headers.location).toBe('https://example.com/before');
    // Behind the app's back, as another instance sharing the database would do it.
    await t.storage.db
      .updateTable('links')
      .set({ original_url: 'https://example.com/after' })
      .where('id', '=', link.id)
      .execute();
    t.clock.advance(DEFAULT_LINK_CACHE.positiveTtlMs + 1);
    const visit = async () => (await t.request({ url: `/${link.short_code}` })).headers.location;
    expect(await visit()).toBe('https://example.com/before');
    if (engine === 'sqlite') {
      expect(await visit()).toBe('https://example.com/before');
    } else {
      await waitFor('the re-read entry', async () => (await visit()) === 'https://example.com/after');
    }
  });
  it('when a link reaches expires_at, then at once: 410 LINK_EXPIRED on visit (cached or not), 404 in the API, no click', async () => {
    const visited = await createLink(t, { expires_at: new Date(t.clock.now() + 60_000).toISOString() });
    const neverVisited = await createLink(t, { expires_at: new Date(t.clock.now() + 60_000).toISOString() });
    expect((await t.request({ url: `/${visited.short_code}` })).status).toBe(302);
    t.clock.advance(60_000);
    for (const link of [visited, neverVisited]) {
      const res = await t.request({ url: `/${link.short_code}` });
      expect(res.status).toBe(410);
      expect(res.body.error.code).toBe('LINK_EXPIRED');
      const html = await t.request({ url: `/${link.short_code}`, headers: { accept: BROWSER_ACCEPT } });
      expect(html.status).toBe(410);
      expect(html.text).toMatch(/Link expired/);
      expect((await t.request({ url: `/api/v1/links/${link.short_code}` })).status).toBe(404);
      expect((await t.request({ url: `/api/v1/links/${link.short_code}/stats` })).status).toBe(404);
    }
    expect(await clickRecords(t, visited.id)).toHaveLength(1);
  });

  it('when the sweep runs, then expired links are removed, their codes answer 410 and are never issued again', async () => {
    const link = await createLink(t, {
      short_code: 'Swept1',
      expires_at: new Date(t.clock.now() + 1000).toISOString(),
    });
    const keep = await createLink(t, { expires_at: new Date(t.clock.now() + 86_400_000).toISOString() });
    t.clock.advance(1000);
    const paginator = new Paginator(createHash('sha256').update('x').digest());
    const sweeper = createLinksService({
      links: createLinksRepository(t.storage, paginator),
      users: createUsersRepository(t.storage.db, paginator),
      dialect: t.storage.dialect,
      clock: t.clock,
      paginator,
      cache: new LinkCache(t.clock),
      publicBaseUrl: t.config.publicBaseUrl,
      passwords: createPasswordHasher(10),
    });
    expect(await sweeper.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect(
      await t.storage.db.selectFrom('links').select('id').where('id', '=', link.id).executeTakeFirst(),
    ).toBeUndefined();
    expect(
      await t.storage.db.selectFrom('links').select('id').where('id', '=', keep.id).executeTakeFirst(),
    ).toBeDefined();
    const tombstone = await t.storage.db
      .selectFrom('link_codes')
      .selectAll()
      .where('code', '=', 'Swept1')
      .executeTakeFirstOrThrow();
    expect(tombstone.retired_reason).toBe('expired');
    t.clock.advance(60_000); // past any cache entry's lifetime: the answer comes from the tombstone
    expect((await t.request({ url: '/Swept1' })).status).toBe(410);
    const reuse = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: 'https://evil.example', short_code: 'Swept1' },
    });
    expect(reuse.status).toBe(409);
  });

  it('when a static route shares the first path segment space, then it wins over /{code}', async () => {
    expect((await t.app.inject({ url: '/docs' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/docs/' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/v3/api-docs' })).statusCode).toBe(200);
    const routes = t.app.printRoutes({ commonPrefix: false });
    expect(routes).toContain(':code');
  });

  it('when another method is used on /{code}, then 405 with Allow', async () => {
    const link = await createLink(t);
    const res = await t.request({ method: 'PUT', url: `/${link.short_code}`, payload: {} });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
  });

  it('when the served OpenAPI document is read, then it declares the redirect with Location, 404 and 410', async () => {
    const op = t.contract.doc.paths['/{code}']?.get as unknown as {
      responses: Record<string, { headers?: object; content?: object }>;
    };
    expect(op.responses['302']?.headers).toHaveProperty('Location');
    expect(op.responses['404']?.content).toHaveProperty(['text/html']);
    expect(op.responses['410']?.content).toHaveProperty(['application/json']);
  });
});

describe.each(engines)('redirect configuration on %s', (engine) => {
  it.each(['301', '307', '308'])('when REDIRECT_STATUS=%s, then the redirect uses it', async (status) => {
    const t = await createTestApp(engine, { env: { REDIRECT_STATUS: status } });
    try {
      const link = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        payload: { original_url: 'https://example.com/s' },
      });
      const res = await t.request({ url: `/${link.body.short_code}` });
      expect(res.status).toBe(Number(status));
      expect(res.headers.location).toBe('https://example.com/s');
    } finally {
      await t.close();
    }
  });

  it('when TRUST_PROXY is set, then the click records the forwarded client address (clipped to 45 characters); otherwise the peer', async () => {
    const trusting = await createTestApp(engine, { env: { TRUST_PROXY: 'true' } });
    const plain = await createTestApp(engine);
    try {
      for (const [t, expected] of [
        [trusting, '203.0.113.7'],
        [plain, '127.0.0.1'],
      ] as const) {
        const link = await createLink(t, { original_url: 'https://example.com/p' });
        await t.request({ url: `/${link.short_code}`, headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' } });
        await t.request({ url: `/${link.short_code}`, headers: { 'x-forwarded-for': 'x'.repeat(100) } });
        await t.app.clickQueue.flush();
        const ips = (
          await t.storage.db.selectFrom('clicks').select('ip').where('link_id', '=', link.id).orderBy('id').execute()
        ).map((r) => r.ip);
        expect(ips[0]).toBe(expected);
        expect(ips[1]!.length).toBeLessThanOrEqual(45);
      }
    } finally {
      await trusting.close();
      await plain.close();
    }
  });
});

describe('redirect context seam', () => {
  it("when the redirect module's root routes are registered, then its rate limit runs for the redirect only", async () => {
    const t = await createTestApp('sqlite');
    const Fastify = (await import('fastify')).default;
    const { createRedirectModule } = await import('../../../src/modules/redirect/redirect.module.js');
    const { LocalIpLimiter } = await import('../../../src/plugins/redirect-limit.js');
    const { sharedSchemas } = await import('../../../src/lib/common.schemas.js');
    const app = Fastify();
    for (const schema of sharedSchemas) app.addSchema(schema);
    const module = createRedirectModule({
      config: t.config,
      storage: t.storage,
      clock: t.clock,
      passwords: createPasswordHasher(10),
      clicks: t.app.clickQueue,
      passwordAttempts: createMemoryAttemptLimiter({ max: 10, windowMs: 60_000, clock: t.clock }),
      limiter: new LocalIpLimiter('redirect', 100),
      metrics: { observeFastRedirect: () => undefined },
    });
    try {
      const link = await createLink(t, { original_url: 'https://example.com/seam' });
      await app.register(module.rootRoutes);
      app.get('/elsewhere', async () => 'ok');
      const res = await app.inject({ url: `/${link.short_code}` });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe('https://example.com/seam');
      expect(res.headers['ratelimit-policy']).toBeDefined();
      expect((await app.inject({ url: '/elsewhere' })).headers['ratelimit-policy']).toBeUndefined();
    } finally {
      await app.close();
      await t.close();
    }
  });
});
