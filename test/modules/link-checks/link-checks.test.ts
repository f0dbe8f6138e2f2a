import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../helpers/app.js';
import { createUser, login, type CreatedUser } from '../../helpers/factories.js';
import {
  countingOutbound,
  eventually,
  PUBLIC_STAND_IN,
  resolverOf,
  RunningClock,
  startDestination,
  watchConnections,
  type Destination,
} from './link-checks.helpers.js';

/** SPEC §24: destination checks, health, fallbacks and the private-address rule, through the app. */
describe.each(engines)('destination checks (%s)', (engine) => {
  let t: TestApp;
  let dest: Destination;
  let owner: CreatedUser;
  let clock: RunningClock;
  let connections: ReturnType<typeof watchConnections>;
  const state = { toggle: 503 };
  let base: string;

  beforeAll(async () => {
    connections = watchConnections();
    dest = await startDestination((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/toggle') res.writeHead(state.toggle).end();
      else if (url.pathname === '/redirect') res.writeHead(302, { location: url.searchParams.get('to')! }).end();
      else if (url.pathname === '/forbidden') res.writeHead(403).end();
      else if (url.pathname === '/gone') res.writeHead(410).end();
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<html>ok</html>');
    });
    base = `http://site.test:${dest.port}`;
    const resolve = resolverOf({
      'site.test': [PUBLIC_STAND_IN],
      'll.test': ['169.254.169.254'],
      'mapped.test': ['::ffff:127.0.0.1'],
      'mixed.test': [PUBLIC_STAND_IN, '10.0.0.7'],
      // DNS rebinding: public when checked, loopback on any later lookup
      'rebind.test': (n) => (n === 1 ? [PUBLIC_STAND_IN] : ['127.0.0.1']),
    });
    clock = new RunningClock();
    t = await createTestApp(engine, {
      clock,
      env: { LINK_CHECKS: 'true', LINK_CHECKS_PER_MINUTE: '60000', LINK_CHECK_INTERVAL_HOURS: '1' },
      deps: { linkChecks: { outbound: countingOutbound(resolve), sliceMs: 300 } },
    });
    owner = await createUser(t);
  });
  afterAll(async () => {
    await t?.close();
    await dest?.close();
    connections?.restore();
  });
  // The tests move the clock by hours: a token from before would have expired.
  beforeEach(async () => {
    owner.token = await login(t, owner.username, owner.password);
  });
  const fresh = async () => (owner.token = await login(t, owner.username, owner.password));
  afterEach(() => {
    state.toggle = 503;
  });

  const create = async (payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/links', token: owner.token, payload });
    expect(res.status, res.text).toBe(201);
    return res.body as { short_code: string; id: number; health: { status: string } };
  };
  const get = async (code: string) =>
    (await t.request({ url: `/api/v1/links/${code}`, token: await fresh() })).body as {
      health: { status: string; checked_at: string | null; http_status: number | null; error: string | null };
      original_url: string;
    };
  /** The link once a check after `after` (ISO) was recorded. */
  const checkedAfter = (code: string, after: string | null = null) =>
    eventually(async () => {
      const link = await get(code);
      return link.health.checked_at !== null && (after === null || link.health.checked_at > after) ? link : null;
    });
  const events = async (linkId: number) =>
    (
      await t.storage.db
        .selectFrom('events')
        .select('payload')
        .where('link_id', '=', linkId)
        .where('type', '=', 'link.health_changed')
        .orderBy('id')
        .execute()
    ).map(
      (r) => JSON.parse(r.payload) as { data: { health: { status: string }; previous_health: { status: string } } },
    );

  it('when a destination fails twice in a row, then it is broken and its visits go to fallback_url (route and fast path); one success makes it ok', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const server = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    const link = await create({ original_url: `${base}/toggle`, fallback_url: 'https://example.org/sorry' });
    expect(link.health.status).toBe('unknown');
    const visit = async (query = '') =>
      (await fetch(`${server}/${link.short_code}${query}`, { redirect: 'manual' })).headers.get('location');
    expect(await visit()).toBe(`${base}/toggle`); // cached now: the fast path answers the next visit

    const first = await checkedAfter(link.short_code);
    expect(first.health).toMatchObject({ status: 'unknown', http_status: 503, error: 'the destination answered 503' });
    clock.advance(15 * 60_000 + 1_000); // a first failure is tried again after a quarter of the interval
    const second = await checkedAfter(link.short_code, first.health.checked_at);
    expect(second.health).toMatchObject({ status: 'broken', http_status: 503 });
    // the cache heard of it: the fast path (no query) and the route (a query) both send visits to the fallback
    expect(await visit()).toBe('https://example.org/sorry');
    expect(await visit('?x=1')).toBe('https://example.org/sorry');
    const broken = await t.request({ url: `/api/v1/users/me/links?health=broken`, token: await fresh() });
    expect(broken.body.data.map((l: { id: number }) => l.id)).toEqual([link.id]);

    state.toggle = 200;
    // A broken link's next check is in its own slot, between half an interval and one and a half from now
    // (link-health.ts nextCheckAt): past the latter it is due, whatever its id.
    clock.advance(1.5 * 3_600_000 + 1_000);
    const healed = await checkedAfter(link.short_code, second.health.checked_at);
    expect(healed.health).toMatchObject({ status: 'ok', http_status: 200, error: null });
    expect(await visit()).toBe(`${base}/toggle`);
    expect((await events(link.id)).map((e) => [e.data.previous_health.status, e.data.health.status])).toEqual([
      ['unknown', 'broken'],
      ['broken', 'ok'],
    ]);
    const agent = dest.requests.find((r) => r.path === '/toggle')!.userAgent;
    expect(agent).toMatch(/^Ferry-LinkCheck\/\S+ \(\+http/);
  });

  it("when a broken link has no fallback_url, then its domain's broken_redirect is not needed on the default domain: visits go to the destination", async () => {
    const link = await create({ original_url: `${base}/gone` });
    const first = await checkedAfter(link.short_code);
    clock.advance(15 * 60_000 + 1_000);
    await checkedAfter(link.short_code, first.health.checked_at);
    expect((await get(link.short_code)).health.status).toBe('broken');
    const res = await t.request({ url: `/${link.short_code}` });
    expect(res.headers.location).toBe(`${base}/gone`);
  });

  it('when the destination answers 403, then the link is ok (the page exists); a new destination resets health to unknown and is checked again', async () => {
    const link = await create({ original_url: `${base}/forbidden` });
    const checked = await checkedAfter(link.short_code);
    expect(checked.health).toMatchObject({ status: 'ok', http_status: 403 });
    const patched = await t.request({
      method: 'PATCH',
      url: `/api/v1/links/${link.short_code}`,
      token: await fresh(),
      payload: { original_url: `${base}/other` },
    });
    expect(patched.body.health).toEqual({
      status: 'unknown',
      checked_at: null,
      http_status: null,
      error: null,
      since: null,
    });
    const again = await checkedAfter(link.short_code);
    expect(again.health).toMatchObject({ status: 'ok', http_status: 200 });
  });

  it('when fallback_url is not a URL a link may point to, then 400 naming it', async () => {
    for (const fallback_url of ['javascript:alert(1)', 'http://user:pw@example.org/', `${t.config.publicBaseUrl}/x`]) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: owner.token,
        payload: { original_url: 'https://example.org/', fallback_url },
      });
      expect(res.status, fallback_url).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('fallback_url');
    }
  });

  it('when a destination or a redirect is on a private address, then no connection goes there and health stays unknown saying why', async () => {
    const secret = (name: string) => `http://127.0.0.1:${dest.port}/secret-${name}`;
    const targets = {
      literal: secret('literal'),
      mappedLiteral: `http://[::ffff:7f00:1]:${dest.port}/secret-mapped-literal`,
      linkLocal: `http://ll.test:${dest.port}/secret-ll`,
      mappedName: `http://mapped.test:${dest.port}/secret-mapped-name`,
      mixed: `http://mixed.test:${dest.port}/secret-mixed`,
      toLoopback: `${base}/redirect?to=${encodeURIComponent(secret('redirected'))}`,
      toLinkLocal: `${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`,
      toMapped: `${base}/redirect?to=${encodeURIComponent(`http://[::ffff:127.0.0.1]:${dest.port}/secret-r-mapped`)}`,
    };
    const links = await Promise.all(Object.values(targets).map((original_url) => create({ original_url })));
    const rebound = await create({ original_url: `http://rebind.test:${dest.port}/fine` });
    for (const link of links) {
      const checked = await checkedAfter(link.short_code);
      expect(checked.health.status, checked.original_url).toBe('unknown');
      expect(checked.health.error, checked.original_url).toMatch(/private address/);
    }
    // DNS answered loopback on a second lookup: the check connected to the address it had checked
    expect((await checkedAfter(rebound.short_code)).health.status).toBe('ok');
    expect(dest.requests.filter((r) => r.path.startsWith('/secret'))).toEqual([]);
    const privateHosts = connections.hosts.filter((h) => /^(169\.254\.|::ffff:|10\.)/.test(h));
    expect(privateHosts).toEqual([]);
  });
});
