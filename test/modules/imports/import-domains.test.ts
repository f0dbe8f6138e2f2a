import { describe, expect, it } from 'vitest';
import { engines, type ApiResponse } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { startSourceStub, useSourceStub } from '../../helpers/source-stub.js';
import { SHLINK_API_KEY, shlinkPage } from './fixtures/shlink.js';

type Job = {
  state: string;
  progress: Record<string, number>;
  items: { source: string; outcome: string; message: string | null }[];
};

/** A Shlink short URL (docs/swagger/definitions/ShortUrl.json) on `domain` (null: Shlink's default domain). */
const shortUrl = (shortCode: string, domain: string | null, longUrl: string) => ({
  shortCode,
  shortUrl: `https://${domain ?? 's.test'}/${shortCode}`,
  longUrl,
  dateCreated: '2024-03-01T10:00:00+00:00',
  visitsSummary: { total: 0, nonBots: 0, bots: 0 },
  tags: [],
  meta: { validSince: null, validUntil: null, maxVisits: null },
  domain,
  title: null,
  crawlable: false,
  forwardQuery: false,
  hasRedirectRules: false,
});

/** SPEC §19/§20: imported links keep their domain; a missing domain is created, unverified, for the importing admin. */
describe.each(engines)('imports onto domains on %s', (engine) => {
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });
  const urls = [
    shortUrl('same1', null, 'https://example.com/default-domain'),
    shortUrl('same1', 'go.example.com', 'https://example.com/go-domain'),
    shortUrl('sale24', 'GO.example.com', 'https://shop.example.com/sale'),
    shortUrl('taken1', 'l.example.org', 'https://example.com/taken-there'),
    shortUrl('bad1', '10.0.0.5:8080', 'https://example.com/address'),
  ];
  const shlink = useSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, (path, q) => {
    if (path === '/rest/v3/short-urls')
      return shlinkPage('shortUrls', urls, Number(q.get('page') ?? 1), Number(q.get('itemsPerPage') ?? 10));
    return /^\/rest\/v3\/short-urls\/[^/]+\/visits$/.test(path) ? shlinkPage('visits', [], 1, 100) : null;
  });

  async function finished(res: ApiResponse): Promise<Job> {
    expect(res.status, res.text).toBe(202);
    for (let i = 0; i < 500; i += 1) {
      const job = await t.request({ url: res.headers.location as string, token: admin.token });
      if ((job.body as Job).state !== 'running') return job.body as Job;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the import did not finish');
  }
  const domainsOf = async () =>
    (await t.request({ url: '/api/v1/domains?limit=100', token: admin.token })).body.data as Array<{
      hostname: string;
      owner_id: number;
      verified_at: string | null;
    }>;
  const link = (code: string, domain?: string) =>
    t.request({ url: `/api/v1/links/${code}${domain ? `?domain=${domain}` : ''}`, token: admin.token });

  it('when Shlink serves links on other domains, then each keeps its code there; a missing domain is made, unverified, for the admin', async () => {
    const owner = await createUser(t, { status: 'active' });
    const other = await t.request({
      method: 'POST',
      url: '/api/v1/domains',
      payload: { hostname: 'l.example.org' },
      token: owner.token,
    });
    expect(other.status, other.text).toBe(201);
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/links',
          payload: { original_url: 'https://example.com/theirs', short_code: 'taken1', domain: 'l.example.org' },
          token: owner.token,
        })
      ).status,
    ).toBe(201);
    const dry = await finished(
      await t.request({
        method: 'POST',
        url: '/api/v1/imports',
        payload: { source: 'shlink', url: shlink.url, api_key: SHLINK_API_KEY, dry_run: true },
        token: admin.token,
      }),
    );
    expect(dry.progress).toMatchObject({ items: 5, created: 3, conflicts: 1, failed: 1 });
    expect((await domainsOf()).map((d) => d.hostname)).not.toContain('go.example.com');

    const job = await finished(
      await t.request({
        method: 'POST',
        url: '/api/v1/imports',
        payload: { source: 'shlink', url: shlink.url, api_key: SHLINK_API_KEY },
        token: admin.token,
      }),
    );
    expect(job).toMatchObject({ state: 'done', progress: { items: 5, created: 3, conflicts: 1, failed: 1 } });
    expect(job.items.find((i) => i.outcome === 'conflict')!.source).toBe('l.example.org/taken1');
    expect(job.items.find((i) => i.outcome === 'failed')!.message).toMatch(
      /not a host name Ferry can serve.*domain-map/,
    );
    expect((await domainsOf()).find((d) => d.hostname === 'go.example.com')).toMatchObject({
      owner_id: admin.id,
      verified_at: null,
    });
    expect((await link('same1')).body).toMatchObject({
      domain: null,
      original_url: 'https://example.com/default-domain',
    });
    expect((await link('same1', 'go.example.com')).body).toMatchObject({
      domain: 'go.example.com',
      original_url: 'https://example.com/go-domain',
      short_url: 'http://go.example.com/same1',
    });
    expect((await link('sale24', 'go.example.com')).body).toMatchObject({
      domain: 'go.example.com',
      original_url: 'https://shop.example.com/sale',
    });
    expect((await link('sale24')).status).toBe(404);
    expect((await link('taken1', 'l.example.org')).body).toMatchObject({
      original_url: 'https://example.com/theirs',
      user_id: owner.id,
    });
  });

  it('when a domain map names other domains, then the links land there (a source domain onto the default one, too)', async () => {
    const job = await finished(
      await t.request({
        method: 'POST',
        url: '/api/v1/imports',
        token: admin.token,
        payload: {
          source: 'shlink',
          url: `${shlink.url}/`,
          api_key: SHLINK_API_KEY,
          owner: admin.username,
          domain_map: { 'go.example.com': 'links.example.net', default: 'd.example.net', 'l.example.org': 'default' },
        },
      }),
    );
    // The same source (its address, ignoring a trailing slash) brought three before: they stay where they are;
    // the one that was a conflict on l.example.org now lands on the default domain.
    expect(job.progress).toMatchObject({ items: 5, created: 1, unchanged: 3 });
    expect((await link('taken1')).body).toMatchObject({
      domain: null,
      original_url: 'https://example.com/taken-there',
    });
    const fresh = await startSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, (path) =>
      path === '/rest/v3/short-urls'
        ? shlinkPage(
            'shortUrls',
            [
              shortUrl('map1', 'go.example.com', 'https://example.com/m1'),
              shortUrl('map2', null, 'https://example.com/m2'),
              shortUrl('map3', 'l.example.org', 'https://example.com/m3'),
            ],
            1,
            10,
          )
        : shlinkPage('visits', [], 1, 100),
    );
    try {
      const mapped = await finished(
        await t.request({
          method: 'POST',
          url: '/api/v1/imports',
          token: admin.token,
          payload: {
            source: 'shlink',
            url: fresh.url,
            api_key: SHLINK_API_KEY,
            domain_map: { 'go.example.com': 'links.example.net', default: 'd.example.net', 'l.example.org': 'default' },
          },
        }),
      );
      expect(mapped.progress).toMatchObject({ items: 3, created: 3 });
      expect((await link('map1', 'links.example.net')).body).toMatchObject({ domain: 'links.example.net' });
      expect((await link('map2', 'd.example.net')).body).toMatchObject({ domain: 'd.example.net' });
      expect((await link('map3')).body).toMatchObject({ domain: null, original_url: 'https://example.com/m3' });
      expect(
        (await domainsOf()).filter((d) => ['links.example.net', 'd.example.net'].includes(d.hostname)),
      ).toHaveLength(2);
    } finally {
      await fresh.close();
    }
  });

  it('when a CSV body comes with ?domain_map=, then its rows land on the mapped domains', async () => {
    const csv = 'url,code,domain\nhttps://example.com/csv1,csv1,Old.Example.com\nhttps://example.com/csv2,csv2,\n';
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/imports?source=csv&domain_map=old.example.com=New.Example.net&domain_map=default=csv-default.example.net',
      payload: csv,
      headers: { 'content-type': 'text/csv' },
      token: admin.token,
    });
    expect((await finished(res)).progress).toMatchObject({ items: 2, created: 2 });
    expect((await link('csv1', 'new.example.net')).body).toMatchObject({ domain: 'new.example.net' });
    expect((await link('csv2', 'csv-default.example.net')).body).toMatchObject({ domain: 'csv-default.example.net' });
    const bad = await t.request({
      method: 'POST',
      url: '/api/v1/imports?source=csv&domain_map=nope',
      payload: csv,
      headers: { 'content-type': 'text/csv' },
      token: admin.token,
    });
    expect(bad.status).toBe(400);
  });
});
