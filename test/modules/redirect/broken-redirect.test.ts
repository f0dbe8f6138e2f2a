import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useUser } from '../../helpers/fixtures.js';
import { HUMAN_UA } from '../links/links.helpers.js';
import { DOMAINS, useDomainTestApp, verifiedDomain, type CreatedDomain } from '../domains/domains.helpers.js';

/**
 * SPEC §24: while a link's destination is broken, its visits go to the link's fallback_url, else to its domain's
 * broken_redirect (issue 42). Both ways a visit is answered: the route (app.inject(), or any request with a query)
 * and the fast path (a cached link visited over a socket with no query, redirect-fast-path.ts).
 */
describe.each(engines)("a domain's broken_redirect on %s", (engine) => {
  let domain: CreatedDomain;
  let port: number;
  // On PostgreSQL the cache is served while the outbox feed's proof is fresh: trusted for a minute here, so the
  // fast path answers (test/modules/redirect/redirect-fast-path.test.ts does the same).
  const d = useDomainTestApp(engine, { redisUrl: '', deps: { linkChangeFeed: { trustMs: 60_000 } } });
  const owner = useUser(d, { status: 'active' });
  beforeAll(async () => {
    domain = await verifiedDomain(d, owner.token, { broken_redirect: 'https://status.example.org/broken' });
    await d.t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (d.t.app.server.address() as AddressInfo).port;
  });

  /** A link on the domain, marked broken as two failed checks leave it (the checks: test/modules/link-checks). */
  const brokenLink = async (payload: Record<string, unknown> = {}) => {
    const res = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/gone', domain: domain.hostname, ...payload },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.id as number;
    await d.t.storage.db
      .updateTable('links')
      .set({ health_status: 'broken', health_failures: 2, health_http_status: 404 })
      .where('id', '=', id)
      .execute();
    return res.body as { id: number; short_code: string };
  };
  /** The route's answer (app.inject never takes the fast path). */
  const routed = async (path: string) =>
    (await d.t.request({ url: path, headers: { host: domain.hostname, 'user-agent': HUMAN_UA } })).headers.location;
  /** The answer over a socket, by Host: the fast path's once the link is cached. */
  const overSocket = (path: string) =>
    new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
      httpRequest(
        { host: '127.0.0.1', port, path, headers: { host: domain.hostname, 'user-agent': HUMAN_UA } },
        (res) => {
          res.resume();
          resolve({ status: res.statusCode!, location: res.headers.location });
        },
      )
        .on('error', reject)
        .end();
    });
  const fastPathCount = async () =>
    Number(/^ferry_redirect_fast_path_total (\d+)$/m.exec((await d.t.request({ url: '/metrics' })).text)?.[1] ?? 0);

  it("when a broken link on the domain has no fallback_url, then its visits go to the domain's broken_redirect on the route and on the fast path", async () => {
    const link = await brokenLink();
    expect(await routed(`/${link.short_code}`)).toBe('https://status.example.org/broken');
    const before = await fastPathCount();
    expect(await overSocket(`/${link.short_code}`)).toEqual({
      status: 302,
      location: 'https://status.example.org/broken',
    });
    expect(await fastPathCount()).toBe(before + 1);
    expect((await overSocket(`/${link.short_code}?utm=x`)).location).toBe('https://status.example.org/broken');
  });

  it("when the broken link has a fallback_url, then it wins over the domain's broken_redirect on both paths", async () => {
    const link = await brokenLink({ fallback_url: 'https://example.org/own-fallback' });
    expect(await routed(`/${link.short_code}`)).toBe('https://example.org/own-fallback');
    const before = await fastPathCount();
    expect((await overSocket(`/${link.short_code}`)).location).toBe('https://example.org/own-fallback');
    expect(await fastPathCount()).toBe(before + 1);
  });

  it("when the domain's broken_redirect changes or is cleared while the link is cached, then the next visit follows it; cleared, the visit goes to the destination", async () => {
    const link = await brokenLink();
    expect((await overSocket(`/${link.short_code}`)).location).toBe('https://status.example.org/broken');
    const patch = (broken_redirect: string | null) =>
      d.t.request({
        method: 'PATCH',
        url: `${DOMAINS}/${domain.id}`,
        token: owner.token,
        payload: { broken_redirect },
      });
    try {
      expect((await patch('https://status.example.org/elsewhere')).status).toBe(200);
      expect((await overSocket(`/${link.short_code}`)).location).toBe('https://status.example.org/elsewhere');
      expect(await routed(`/${link.short_code}`)).toBe('https://status.example.org/elsewhere');
      expect((await patch(null)).status).toBe(200);
      expect((await overSocket(`/${link.short_code}`)).location).toBe('https://example.com/gone');
      expect(await routed(`/${link.short_code}`)).toBe('https://example.com/gone');
    } finally {
      expect((await patch('https://status.example.org/broken')).status).toBe(200);
    }
  });

  it("when a broken link forwards the visit's query, then the query goes on to the domain's broken_redirect", async () => {
    const link = await brokenLink({ forward_query: true });
    expect(await routed(`/${link.short_code}?campaign=spring`)).toBe(
      'https://status.example.org/broken?campaign=spring',
    );
  });

  it('when a link on the domain is not broken, then broken_redirect plays no part', async () => {
    const res = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/fine', domain: domain.hostname },
    });
    expect(await routed(`/${res.body.short_code}`)).toBe('https://example.com/fine');
    expect((await overSocket(`/${res.body.short_code}`)).location).toBe('https://example.com/fine');
  });
});
