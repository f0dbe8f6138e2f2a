import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { createLink, createUser, visit, type CreatedLink, type CreatedUser } from '../../helpers/factories.js';
import { domainTestApp, verifiedDomain, type CreatedDomain, type DomainTestApp } from './domains.helpers.js';

const DEFAULT_HOST = 'fry.example';

/** SPEC §19 "Keys and statistics": click records keep the domain; lists, stats and exports filter by it; limited keys see their domains only. */
describe.each(engines)('statistics, exports and lists by domain on %s', (engine) => {
  let d: DomainTestApp;
  let owner: CreatedUser;
  let admin: CreatedUser;
  let a: CreatedDomain;
  let b: CreatedDomain;
  let onA: CreatedLink;
  let onB: CreatedLink;
  let onDefault: CreatedLink;
  beforeAll(async () => {
    d = await domainTestApp(engine);
    owner = await createUser(d.t, { status: 'active' });
    admin = await createUser(d.t, { role: 'admin', status: 'active' });
    a = await verifiedDomain(d, owner.token);
    b = await verifiedDomain(d, owner.token);
    onA = await createLink(d.t, { domain: a.hostname }, owner.token);
    onB = await createLink(d.t, { domain: b.hostname }, owner.token);
    onDefault = await createLink(d.t, {}, owner.token);
    for (const [link, host, times] of [[onA, a.hostname, 2], [onB, b.hostname, 1], [onDefault, DEFAULT_HOST, 1]] as const) {
      for (let i = 0; i < times; i += 1) expect((await visit(d.t, link.short_code, { host })).status).toBe(302);
    }
    await d.t.app.clickQueue.flush();
  });
  afterAll(async () => d.close());

  const get = (url: string, token: string, headers: Record<string, string> = {}) => d.t.request({ url, token, headers });
  const codes = (body: { data: Array<{ short_code: string }> }) => body.data.map((l) => l.short_code).sort();
  const keyFor = async (user: CreatedUser, domains: number[]): Promise<string> => {
    const res = await d.t.request({ method: 'POST', url: `/api/v1/users/${user.id}/api-keys`, token: user.token, payload: { name: 'one domain', scopes: ['links:read', 'stats:read'], domains } });
    expect(res.status, res.text).toBe(201);
    return res.body.key as string;
  };

  it('when a link on a domain is visited, then its click records (JSON, v2 and CSV) carry the domain; the default domain\'s carry null', async () => {
    const json = await get(`/api/v1/links/${onA.short_code}/clicks?domain=${a.hostname}`, owner.token);
    expect(json.status, json.text).toBe(200);
    expect(json.body.data.map((c: { domain: string | null }) => c.domain)).toEqual([a.hostname, a.hostname]);
    const v2 = await get(`/api/v2/links/${onA.short_code}/clicks?domain=${a.hostname}`, owner.token);
    expect(v2.body.data[0].domain).toBe(a.hostname);
    const csv = await get(`/api/v1/links/${onA.short_code}/clicks?domain=${a.hostname}`, owner.token, { accept: 'text/csv' });
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]!.split(',').at(-1)).toBe('domain');
    expect(lines.slice(1).map((l) => l.split(',').at(-1))).toEqual([a.hostname, a.hostname]);
    const plain = await get(`/api/v1/links/${onDefault.short_code}/clicks`, owner.token);
    expect(plain.body.data.map((c: { domain: string | null }) => c.domain)).toEqual([null]);
  });

  it("when the user's list and the admin's list name a domain, then only its links", async () => {
    expect(codes((await get(`/api/v1/users/me/links?domain=${a.hostname}`, owner.token)).body)).toEqual([onA.short_code]);
    const all = await get(`/api/v1/links?domain=${a.hostname}&limit=100`, admin.token);
    expect(all.status, all.text).toBe(200);
    expect(codes(all.body)).toEqual([onA.short_code]);
    const byDefault = await get(`/api/v1/links?domain=${DEFAULT_HOST}&user_id=${owner.id}`, admin.token);
    expect(codes(byDefault.body)).toEqual([onDefault.short_code]);
    expect((await get('/api/v1/links?domain=nowhere.example.test', admin.token)).body.data).toEqual([]);
  });

  it("when the user's statistics name a domain, then they count its links only", async () => {
    const whole = await get('/api/v1/users/me/stats', owner.token);
    expect(whole.body).toMatchObject({ links: 3, total_clicks: 4 });
    const res = await get(`/api/v1/users/me/stats?domain=${a.hostname}`, owner.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ links: 1, total_clicks: 2, human_clicks: 2, top_links: [{ short_code: onA.short_code, clicks: 2 }] });
    expect(res.body.timeseries.reduce((n: number, s: { clicks: number }) => n + s.clicks, 0)).toBe(2);
    expect(res.body.top_devices).toEqual([{ value: 'desktop', clicks: 2 }]);
    const byDefault = await get(`/api/v1/users/me/stats?domain=${DEFAULT_HOST}`, owner.token);
    expect(byDefault.body).toMatchObject({ links: 1, total_clicks: 1, top_links: [{ short_code: onDefault.short_code, clicks: 1 }] });
  });

  it('when a key is limited to a domain, then its statistics, lists and exports cover that domain only; another is 403', async () => {
    const key = await keyFor(owner, [a.id]);
    expect((await get('/api/v1/users/me/stats', key)).body).toMatchObject({ links: 1, total_clicks: 2 });
    const elsewhere = await get(`/api/v1/users/me/stats?domain=${b.hostname}`, key);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.details[0].field).toBe('domain');
    expect(codes((await get('/api/v1/users/me/links', key)).body)).toEqual([onA.short_code]);
    expect((await get(`/api/v1/links/${onA.short_code}/clicks?domain=${a.hostname}`, key, { accept: 'text/csv' })).status).toBe(200);
    expect((await get(`/api/v1/links/${onB.short_code}/clicks?domain=${b.hostname}`, key)).status).toBe(403);
    expect((await get(`/api/v1/links/${onB.short_code}/stats?domain=${b.hostname}`, key)).status).toBe(403);
    const adminKey = await keyFor(admin, [b.id]);
    expect(codes((await get('/api/v1/links?limit=100', adminKey)).body)).toEqual([onB.short_code]);
  });
});
