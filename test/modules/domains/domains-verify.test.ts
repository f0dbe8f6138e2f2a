import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { openEventsCursor } from '../../../src/db/events.js';
import { createUser, login, type CreatedUser } from '../../helpers/factories.js';
import { freePort } from '../../helpers/scale-out.js';
import {
  addDomain,
  domainTestApp,
  DOMAINS,
  startDomainWebServer,
  verifiedDomain,
  type DomainTestApp,
} from './domains.helpers.js';

const DAY = 24 * 3_600_000;

describe.each(engines)('domain verification on %s', (engine) => {
  let d: DomainTestApp;
  let owner: CreatedUser;
  let port: number;
  beforeAll(async () => {
    // The HTTP proof reaches this very app: it listens on the port the check connects to.
    port = await freePort();
    d = await domainTestApp(engine, {
      env: { DOMAIN_VERIFY_ALLOW_PRIVATE: 'true' },
      deps: { domainVerification: { httpPort: port } },
    });
    await d.t.app.listen({ port, host: '127.0.0.1' });
    owner = await createUser(d.t, { status: 'active' });
  });
  afterAll(async () => d.close());
  // Some tests move the clock on by days: each starts with a token that is valid now.
  beforeEach(async () => {
    owner.token = await login(d.t, owner.username, owner.password);
  });

  const verify = (id: number) => d.t.request({ method: 'POST', url: `${DOMAINS}/${id}/verify`, token: owner.token });

  it('when the TXT record has the value (from the loopback DNS server), then 200 with verified_at set', async () => {
    const domain = await addDomain(d.t, owner.token);
    d.dns.txt.set(domain.verification.txt_name, ['v=spf1 -all', domain.verification.txt_value]);
    const before = d.dns.queries;
    const res = await verify(domain.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ verified_at: new Date(d.t.clock.now()).toISOString(), status: 'active' });
    expect(d.dns.queries).toBeGreaterThan(before);
  });

  it('when neither proof is there, then 422 DOMAIN_NOT_VERIFIED saying what was found', async () => {
    const domain = await addDomain(d.t, owner.token);
    d.dns.txt.set(domain.verification.txt_name, ['ferry-verification=somebody-elses']);
    const res = await verify(domain.id);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('DOMAIN_NOT_VERIFIED');
    const byField = Object.fromEntries(
      res.body.error.details.map((x: { field: string; message: string }) => [x.field, x.message]),
    );
    expect(byField.dns).toBe(`TXT _ferry.${domain.hostname}: answered without the token`);
    expect(byField.http).toBe(`http://${domain.hostname}${domain.verification.http_path}: no address`);
    expect((await d.t.request({ url: `${DOMAINS}/${domain.id}`, token: owner.token })).body.verified_at).toBeNull();
  });

  it("when the name points at this service, then an unverified claim's HTTP proof fails: Ferry does not answer its token", async () => {
    const domain = await addDomain(d.t, owner.token);
    d.dns.a.set(domain.hostname, '127.0.0.1');
    const res = await verify(domain.id);
    expect(res.status).toBe(422);
    expect(res.body.error.details[1].message).toBe(
      `http://${domain.hostname}${domain.verification.http_path}: answered 404`,
    );
  });

  it("when the host's current server answers the token, then the HTTP proof passes", async () => {
    const domain = await addDomain(d.t, owner.token);
    const token = domain.verification.http_path.split('/').pop()!;
    const server = await startDomainWebServer('127.0.0.3', port, (req, res) => {
      if (req.url === domain.verification.http_path && req.headers.host === `${domain.hostname}:${port}`)
        res.end(`${token}\n`);
      else res.writeHead(404).end();
    });
    try {
      d.dns.a.set(domain.hostname, '127.0.0.3');
      const res = await verify(domain.id);
      expect(res.status, res.text).toBe(200);
      expect(res.body.status).toBe('active');
    } finally {
      await server.close();
    }
  });

  it('when a verified domain points at this service, then Ferry answers its token and its re-check passes without TXT', async () => {
    const domain = await verifiedDomain(d, owner.token);
    d.dns.txt.delete(domain.verification.txt_name);
    d.dns.a.set(domain.hostname, '127.0.0.1');
    d.t.clock.advance(DAY + 1);
    expect(await d.t.app.runJob('domain-recheck')).toBeGreaterThanOrEqual(1);
    const record = await d.t.request({
      url: `${DOMAINS}/${domain.id}`,
      token: await login(d.t, owner.username, owner.password),
    });
    expect(record.body).toMatchObject({
      status: 'active',
      failing_since: null,
      last_checked_at: new Date(d.t.clock.now()).toISOString(),
    });
  });

  it("when Ferry is asked for a token, then it answers only a verified domain's, on its own host; so does the TLS ask", async () => {
    const pending = await addDomain(d.t, owner.token);
    expect(
      (await d.t.request({ url: pending.verification.http_path, headers: { host: pending.hostname } })).status,
    ).toBe(404);
    expect((await d.t.request({ url: `/internal/tls/allowed?domain=${pending.hostname}` })).status).toBe(404);
    expect((await d.t.request({ url: '/internal/tls/allowed?domain=fry.example' })).status).toBe(404);
    const verified = await verifiedDomain(d, owner.token);
    const own = await d.t.request({ url: verified.verification.http_path, headers: { host: verified.hostname } });
    expect(own.status).toBe(200);
    expect(own.text).toBe(verified.verification.http_path.split('/').pop());
    expect(
      (await d.t.request({ url: verified.verification.http_path, headers: { host: 'other.example.test' } })).status,
    ).toBe(404);
    const allowed = await d.t.request({ url: `/internal/tls/allowed?domain=${verified.hostname.toUpperCase()}` });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toEqual({ domain: verified.hostname, allowed: true });
  });

  it('when the HTTP proof answers a redirect, then it is not followed and the 422 says so', async () => {
    // Another server on the port the check uses, on another loopback address the DNS names.
    const server = await startDomainWebServer('127.0.0.2', port, (_req, res) => {
      res.writeHead(302, { location: 'http://127.0.0.1/' }).end();
    });
    try {
      const domain = await addDomain(d.t, owner.token);
      d.dns.a.set(domain.hostname, '127.0.0.2');
      const res = await verify(domain.id);
      expect(res.status).toBe(422);
      expect(res.body.error.details.find((x: { field: string }) => x.field === 'http').message).toContain(
        '302 (redirects are not followed)',
      );
    } finally {
      await server.close();
    }
  });

  it('when a verified domain fails its daily re-checks for 7 days, then it takes no new links, says why, and its links still redirect; a passing re-check restores it', async () => {
    const domain = await verifiedDomain(d, owner.token);
    const link = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/kept', domain: domain.hostname },
    });
    expect(link.status, link.text).toBe(201);
    // SPEC §22: the re-checks' public events, once when it starts failing and once when it passes again
    const events = await openEventsCursor(d.t.storage.db, 'end');
    const domainEvents = async () =>
      (await events.read()).filter((e) => e.domainId === domain.id && e.event.type.startsWith('domain.'));
    d.dns.txt.delete(domain.verification.txt_name);
    d.t.clock.advance(DAY + 1);
    await d.t.app.runJob('domain-recheck');
    const token = await login(d.t, owner.username, owner.password); // a day later: the first token has expired
    const failing = await d.t.request({ url: `${DOMAINS}/${domain.id}`, token });
    expect(failing.body).toMatchObject({
      status: 'failing',
      accepts_links: true,
      failing_since: new Date(d.t.clock.now()).toISOString(),
    });
    expect(failing.body.status_message).toContain(`TXT _ferry.${domain.hostname}`);
    for (let day = 0; day < 7; day += 1) {
      d.t.clock.advance(DAY + 1);
      await d.t.app.runJob('domain-recheck');
    }
    const failed = await domainEvents();
    expect(failed.map((e) => e.event.type)).toEqual(['domain.failing']);
    expect(failed[0]!.userId).toBe(owner.id);
    expect(failed[0]!.event.data).toMatchObject({ id: domain.id, status: 'failing', hostname: domain.hostname });
    const later = await login(d.t, owner.username, owner.password);
    const stopped = await d.t.request({ url: `${DOMAINS}/${domain.id}`, token: later });
    expect(stopped.body).toMatchObject({ status: 'stopped', accepts_links: false });
    const refused = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: later,
      payload: { original_url: 'https://example.com/new', domain: domain.hostname },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('DOMAIN_NOT_VERIFIED');
    expect(refused.body.error.message).toContain('re-checks have failed for 7 days');
    const visit = await d.t.request({ url: `/${link.body.short_code}`, headers: { host: domain.hostname } });
    expect(visit.status).toBe(302);
    expect(visit.headers.location).toBe('https://example.com/kept');

    // The record is back: the next re-check passes, the domain takes links again.
    d.dns.txt.set(domain.verification.txt_name, [domain.verification.txt_value]);
    d.t.clock.advance(DAY + 1);
    expect(await d.t.app.runJob('domain-recheck')).toBeGreaterThanOrEqual(1);
    expect((await domainEvents()).map((e) => e.event.type)).toEqual(['domain.verified']);
    const again = await login(d.t, owner.username, owner.password);
    const restored = await d.t.request({ url: `${DOMAINS}/${domain.id}`, token: again });
    expect(restored.body).toMatchObject({
      status: 'active',
      accepts_links: true,
      failing_since: null,
      status_message: null,
      last_checked_at: new Date(d.t.clock.now()).toISOString(),
    });
    const taken = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: again,
      payload: { original_url: 'https://example.com/after', domain: domain.hostname },
    });
    expect(taken.status, taken.text).toBe(201);
  });
});
