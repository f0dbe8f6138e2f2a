import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useUser } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { addDomain, DOMAINS, uniqueHost, verifiedDomain, useDomainTestApp } from './domains.helpers.js';

describe.each(engines)('the domains resource on %s', (engine) => {
  const d = useDomainTestApp(engine);
  const owner = useUser(d, { status: 'active' });
  const admin = useUser(d, { role: 'admin', status: 'active' });

  it('when an active user adds a domain, then 201 with Location, the record and how to verify it', async () => {
    const hostname = uniqueHost();
    const res = await d.t.request({
      method: 'POST',
      url: DOMAINS,
      token: owner.token,
      payload: { hostname: hostname.toUpperCase() },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.location).toBe(`${DOMAINS}/${res.body.id}`);
    const token = res.body.verification.http_path.split('/').pop();
    expect(token).toMatch(/^[0-9a-zA-Z]{32}$/);
    expect(res.body).toMatchObject({
      hostname,
      owner_id: owner.id,
      verified_at: null,
      status: 'pending',
      accepts_links: true,
      verification: {
        txt_name: `_ferry.${hostname}`,
        txt_value: `ferry-verification=${token}`,
        http_path: `/.well-known/ferry-verification/${token}`,
      },
      root_redirect: null,
      not_found_redirect: null,
      expired_redirect: null,
      scheme: null,
    });
  });

  it('when a verified host name is claimed (in any case, by anyone, its owner too), then 409 CONFLICT', async () => {
    const first = await verifiedDomain(d, owner.token);
    const other = await createUser(d.t, { status: 'active' });
    for (const token of [other.token, owner.token, admin.token]) {
      const res = await d.t.request({
        method: 'POST',
        url: DOMAINS,
        token,
        payload: { hostname: `${first.hostname.toUpperCase()}.` },
      });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('CONFLICT');
    }
  });

  it('when the name is no host name or is the default domain, then 400 naming hostname', async () => {
    for (const hostname of ['localhost', '127.0.0.1', 'a..b', '-x.example', 'fry.example', 'x.example:8080']) {
      const res = await d.t.request({ method: 'POST', url: DOMAINS, token: owner.token, payload: { hostname } });
      expect(res.status, hostname).toBe(400);
      expect(
        res.body.error.details.map((x: { field: string }) => x.field),
        hostname,
      ).toContain('hostname');
    }
  });

  it('when a pending user adds a domain, then 422 ACCOUNT_NOT_ACTIVE; without a token, 401', async () => {
    const pending = await createUser(d.t, { status: 'pending' });
    const res = await d.t.request({
      method: 'POST',
      url: DOMAINS,
      token: pending.token,
      payload: { hostname: uniqueHost() },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('ACCOUNT_NOT_ACTIVE');
    expect((await d.t.request({ method: 'POST', url: DOMAINS, payload: { hostname: uniqueHost() } })).status).toBe(401);
  });

  it("when an admin names owner_id, then the domain is that user's; a user naming another owner gets 403", async () => {
    const made = await addDomain(d.t, admin.token, { owner_id: owner.id });
    expect((await d.t.request({ url: `${DOMAINS}/${made.id}`, token: owner.token })).body.owner_id).toBe(owner.id);
    const other = await createUser(d.t, { status: 'active' });
    const res = await d.t.request({
      method: 'POST',
      url: DOMAINS,
      token: other.token,
      payload: { hostname: uniqueHost(), owner_id: owner.id },
    });
    expect(res.status).toBe(403);
  });

  it('when users list domains, then each sees their own and an admin sees every one (v2 in camelCase)', async () => {
    const mine = await addDomain(d.t, owner.token);
    const other = await createUser(d.t, { status: 'active' });
    const theirs = await addDomain(d.t, other.token);
    const own = await d.t.request({ url: `${DOMAINS}?limit=100`, token: other.token });
    expect(own.body.data.map((x: { id: number }) => x.id)).toEqual([theirs.id]);
    const all = await d.t.request({ url: `${DOMAINS}?limit=100`, token: admin.token });
    expect(all.body.data.map((x: { id: number }) => x.id)).toEqual(expect.arrayContaining([mine.id, theirs.id]));
    const v2 = await d.t.request({ url: `/api/v2/domains/${theirs.id}`, token: other.token });
    expect(v2.body).toMatchObject({
      ownerId: other.id,
      verifiedAt: null,
      verification: { txtName: `_ferry.${theirs.hostname}` },
    });
    expect((await d.t.request({ url: `${DOMAINS}/${theirs.id}`, token: owner.token })).status).toBe(403);
  });

  it('when the owner patches the fallbacks, then they are kept; a bad URL or a new hostname is 400; a stale If-Match 412', async () => {
    const domain = await addDomain(d.t, owner.token);
    const url = `${DOMAINS}/${domain.id}`;
    const ok = await d.t.request({
      method: 'PATCH',
      url,
      token: owner.token,
      payload: { not_found_redirect: 'https://example.com/missing', scheme: 'http' },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({
      not_found_redirect: 'https://example.com/missing',
      scheme: 'http',
      root_redirect: null,
    });
    const bad = await d.t.request({
      method: 'PATCH',
      url,
      token: owner.token,
      payload: { root_redirect: `https://${domain.hostname}/x`, hostname: uniqueHost() },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((x: { field: string }) => x.field).sort()).toEqual(['hostname', 'root_redirect']);
    const stale = await d.t.request({
      method: 'PATCH',
      url,
      token: owner.token,
      headers: { 'if-match': `"domain-${domain.id}-v1"` },
      payload: { expired_redirect: null },
    });
    expect(stale.status).toBe(412);
  });

  it('when a domain has links, then DELETE is 409; an admin with force=true deletes it and its links', async () => {
    const domain = await addDomain(d.t, owner.token);
    const link = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/a', domain: domain.hostname },
    });
    expect(link.status, link.text).toBe(201);
    const url = `${DOMAINS}/${domain.id}`;
    expect((await d.t.request({ method: 'DELETE', url, token: owner.token })).status).toBe(409);
    expect((await d.t.request({ method: 'DELETE', url: `${url}?force=true`, token: owner.token })).status).toBe(403);
    expect((await d.t.request({ method: 'DELETE', url: `${url}?force=true`, token: admin.token })).status).toBe(204);
    expect((await d.t.request({ url, token: admin.token })).status).toBe(404);
    expect(
      (
        await d.t.request({
          url: `/api/v1/links/${link.body.short_code}?domain=${domain.hostname}`,
          token: admin.token,
        })
      ).status,
    ).toBe(404);
  });

  it('when a domain without links is deleted by its owner, then 204 and the name can be added again', async () => {
    const domain = await addDomain(d.t, owner.token);
    expect((await d.t.request({ method: 'DELETE', url: `${DOMAINS}/${domain.id}`, token: owner.token })).status).toBe(
      204,
    );
    expect(
      (await d.t.request({ method: 'POST', url: DOMAINS, token: owner.token, payload: { hostname: domain.hostname } }))
        .status,
    ).toBe(201);
  });
});
