import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { createUser, type CreatedUser } from '../helpers/factories.js';
import { waitFor } from '../helpers/scale-out.js';
import { missing, unless } from '../helpers/skip.js';

const HUMAN_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';

/**
 * Two API instances on PostgreSQL and Redis (SPEC §19): a domain verified, changed or deleted on one is served
 * accordingly by the other within a second, over the outbox feed (infra/outbox-feed.ts).
 */
describe.runIf(missing.scaleOut === null)(unless(missing.scaleOut, 'domains across instances'), () => {
  let a: TestApp;
  let b: TestApp;
  let dns: TestDnsServer;
  let owner: CreatedUser;
  beforeAll(async () => {
    dns = await startDnsServer();
    // Two instances in one test process share one event loop: load shedding is off (as in the links' own test).
    const env = {
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      PUBLIC_BASE_URL: 'https://fry.example',
      DNS_SERVERS: dns.address,
    };
    a = await createTestApp('postgres', { env });
    b = await createTestApp('postgres', { env, databaseUrl: a.config.databaseUrl!, redisPrefix: a.redisPrefix });
    owner = await createUser(a, { status: 'active' });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
    await dns.close();
  });

  const visit = (t: TestApp, path: string, host: string) =>
    t.app.inject({ url: path, headers: { host, 'user-agent': HUMAN_UA } });
  /** The other instance answers `expected` within a second of the change (measured from the change's answer). */
  const followsWithin1s = async (what: string, check: () => Promise<boolean>) => {
    const started = Date.now();
    await waitFor(what, check, 1_000);
    return Date.now() - started;
  };

  it('when a domain is verified, changed and deleted on one instance, then the other serves it accordingly within 1 s', async () => {
    const created = await a.request({
      method: 'POST',
      url: '/api/v1/domains',
      token: owner.token,
      payload: { hostname: `scale-${Date.now()}.example.test` },
    });
    const domain = created.body;
    const link = await a.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/on-domain', domain: domain.hostname },
    });
    expect(link.status, link.text).toBe(201);
    const code = link.body.short_code as string;
    // Not verified yet: the host is the default domain's on both instances (the code is not there).
    expect((await visit(b, `/${code}`, domain.hostname)).statusCode).toBe(404);

    dns.txt.set(domain.verification.txt_name, [domain.verification.txt_value]);
    expect(
      (await a.request({ method: 'POST', url: `/api/v1/domains/${domain.id}/verify`, token: owner.token })).status,
    ).toBe(200);
    await followsWithin1s(
      'B to serve the verified domain',
      async () => (await visit(b, `/${code}`, domain.hostname)).headers.location === 'https://example.com/on-domain',
    );

    expect(
      (
        await a.request({
          method: 'PATCH',
          url: `/api/v1/domains/${domain.id}`,
          token: owner.token,
          payload: { not_found_redirect: 'https://example.com/nothing-here' },
        })
      ).status,
    ).toBe(200);
    await followsWithin1s(
      "B to use the domain's new fallback",
      async () => (await visit(b, '/nosuch9', domain.hostname)).headers.location === 'https://example.com/nothing-here',
    );

    const admin = await createUser(a, { role: 'admin', status: 'active' });
    expect(
      (await a.request({ method: 'DELETE', url: `/api/v1/domains/${domain.id}?force=true`, token: admin.token }))
        .status,
    ).toBe(204);
    await followsWithin1s(
      'B to stop serving the deleted domain',
      async () => (await visit(b, `/${code}`, domain.hostname)).statusCode === 404,
    );
    expect((await b.request({ url: `/internal/tls/allowed?domain=${domain.hostname}` })).status).toBe(404);
  });

  it('when a link is created on a domain on one instance, then the other reads it with its domain at once', async () => {
    const created = await a.request({
      method: 'POST',
      url: '/api/v1/domains',
      token: owner.token,
      payload: { hostname: `fresh-${Date.now()}.example.test` },
    });
    const link = await a.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/x', domain: created.body.hostname },
    });
    const read = await b.request({
      url: `/api/v1/links/${link.body.short_code}?domain=${created.body.hostname}`,
      token: owner.token,
    });
    expect(read.status, read.text).toBe(200);
    expect(read.body.short_url).toBe(`https://${created.body.hostname}/${link.body.short_code}`);
  });
});
