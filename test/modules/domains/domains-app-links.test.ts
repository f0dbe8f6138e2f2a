import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { useUser } from '../../helpers/fixtures.js';
import { addDomain, DOMAINS, useDomainTestApp, verifiedDomain } from './domains.helpers.js';

const AASA_PATH = '/.well-known/apple-app-site-association';
const ASSET_LINKS_PATH = '/.well-known/assetlinks.json';

/** Apple's format: its keys (appIDs) must come back exactly as sent, in v1 and v2 alike. */
const aasa = (app: string) => ({
  applinks: { details: [{ appIDs: [`ABCDE12345.${app}`], components: [{ '/': '/*', comment: 'every path' }] }] },
  webcredentials: { apps: [`ABCDE12345.${app}`] },
});
const assetLinks = (pkg: string) => [
  {
    relation: ['delegate_permission/common.handle_all_urls'],
    target: { namespace: 'android_app', package_name: pkg, sha256_cert_fingerprints: ['14:6D:E9:83'] },
  },
];

describe.each(engines)('app links on %s', (engine) => {
  const d = useDomainTestApp(engine);
  const owner = useUser(d);
  const other = useUser(d);
  const admin = useUser(d, { role: 'admin' });

  const get = (path: string, host: string) => d.t.request({ url: path, headers: { host } });
  const patchInstance = (payload: unknown, token = admin.token, version = 1) =>
    d.t.request({ method: 'PATCH', url: `/api/v${version}/instance`, token, payload });

  it('when a verified domain has app links, then its host serves them as application/json, exactly as set', async () => {
    const domain = await verifiedDomain(d, owner.token);
    const res = await d.t.request({
      method: 'PATCH',
      url: `${DOMAINS}/${domain.id}`,
      token: owner.token,
      payload: {
        apple_app_site_association: aasa('com.example.one'),
        android_asset_links: assetLinks('com.example.one'),
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.apple_app_site_association).toEqual(aasa('com.example.one'));
    expect(res.body.android_asset_links).toEqual(assetLinks('com.example.one'));
    const apple = await get(AASA_PATH, domain.hostname);
    expect(apple.status).toBe(200);
    expect(apple.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(apple.text)).toEqual(aasa('com.example.one'));
    const android = await get(ASSET_LINKS_PATH, domain.hostname);
    expect(android.status).toBe(200);
    expect(android.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(android.text)).toEqual(assetLinks('com.example.one'));
  });

  it('when app links are cleared with null, then their paths answer 404 like any unknown path of the host', async () => {
    const domain = await verifiedDomain(d, owner.token, { android_asset_links: assetLinks('com.example.two') });
    expect((await get(ASSET_LINKS_PATH, domain.hostname)).status).toBe(200);
    const cleared = await d.t.request({
      method: 'PATCH',
      url: `${DOMAINS}/${domain.id}`,
      token: owner.token,
      payload: { android_asset_links: null },
    });
    expect(cleared.body.android_asset_links).toBeNull();
    expectEnvelope(await get(ASSET_LINKS_PATH, domain.hostname), 404, 'NOT_FOUND');
    expectEnvelope(await get(AASA_PATH, domain.hostname), 404, 'NOT_FOUND');
    expectEnvelope(await get('/.well-known/something-else', domain.hostname), 404, 'NOT_FOUND');
  });

  it("when only the instance has app links, then a domain's host never falls back to them, and the default host serves them", async () => {
    const set = await patchInstance({
      apple_app_site_association: aasa('com.example.default'),
      android_asset_links: assetLinks('com.example.default'),
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body.apple_app_site_association).toEqual(aasa('com.example.default'));
    const domain = await verifiedDomain(d, owner.token);
    expectEnvelope(await get(AASA_PATH, domain.hostname), 404, 'NOT_FOUND');
    expectEnvelope(await get(ASSET_LINKS_PATH, domain.hostname), 404, 'NOT_FOUND');
    for (const host of ['fry.example', 'anything-else.example']) {
      const apple = await get(AASA_PATH, host);
      expect(apple.status).toBe(200);
      expect(apple.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(apple.text)).toEqual(aasa('com.example.default'));
      expect(JSON.parse((await get(ASSET_LINKS_PATH, host)).text)).toEqual(assetLinks('com.example.default'));
    }
    // GET /instance shows them to anyone, as the well-known paths do.
    expect((await d.t.request({ url: '/api/v1/instance' })).body.android_asset_links).toEqual(
      assetLinks('com.example.default'),
    );
    const cleared = await patchInstance({ apple_app_site_association: null, android_asset_links: null });
    expect([cleared.body.apple_app_site_association, cleared.body.android_asset_links]).toEqual([null, null]);
    expectEnvelope(await get(AASA_PATH, 'fry.example'), 404, 'NOT_FOUND');
    expectEnvelope(await get(ASSET_LINKS_PATH, 'fry.example'), 404, 'NOT_FOUND');
  });

  it("when an unverified domain has app links, then its host is the default domain's and does not serve them", async () => {
    const domain = await addDomain(d.t, owner.token, { apple_app_site_association: aasa('com.example.pending') });
    expect((await get(AASA_PATH, domain.hostname)).status).toBe(404);
  });

  it('when two domains have their own app links, then each host serves its own', async () => {
    const a = await verifiedDomain(d, owner.token, { apple_app_site_association: aasa('com.example.a') });
    const b = await verifiedDomain(d, other.token, { apple_app_site_association: aasa('com.example.b') });
    expect(JSON.parse((await get(AASA_PATH, a.hostname)).text)).toEqual(aasa('com.example.a'));
    expect(JSON.parse((await get(AASA_PATH, b.hostname.toUpperCase())).text)).toEqual(aasa('com.example.b'));
  });

  it('when v2 sets app links, then the field names are camelCase and the documents keep their own keys verbatim', async () => {
    const domain = await verifiedDomain(d, owner.token);
    const res = await d.t.request({
      method: 'PATCH',
      url: `/api/v2/domains/${domain.id}`,
      token: owner.token,
      payload: { appleAppSiteAssociation: aasa('com.example.v2'), androidAssetLinks: assetLinks('com.example.v2') },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.appleAppSiteAssociation).toEqual(aasa('com.example.v2'));
    expect(res.body.androidAssetLinks).toEqual(assetLinks('com.example.v2'));
    expect(JSON.parse((await get(AASA_PATH, domain.hostname)).text)).toEqual(aasa('com.example.v2'));
    expect(JSON.parse((await get(ASSET_LINKS_PATH, domain.hostname)).text)).toEqual(assetLinks('com.example.v2'));
    const v1 = await d.t.request({ url: `${DOMAINS}/${domain.id}`, token: owner.token });
    expect(v1.body.apple_app_site_association).toEqual(aasa('com.example.v2'));
    const instance = await patchInstance({ androidAssetLinks: assetLinks('com.example.v2i') }, admin.token, 2);
    expect(instance.status, instance.text).toBe(200);
    expect(instance.body.androidAssetLinks).toEqual(assetLinks('com.example.v2i'));
    expect(JSON.parse((await get(ASSET_LINKS_PATH, 'fry.example')).text)).toEqual(assetLinks('com.example.v2i'));
    await patchInstance({ android_asset_links: null });
  });

  it.each([
    ['an array as the Apple file', { apple_app_site_association: [] }, 'apple_app_site_association'],
    ['a string as the Apple file', { apple_app_site_association: 'applinks' }, 'apple_app_site_association'],
    ['an object as the asset links', { android_asset_links: {} }, 'android_asset_links'],
    ['a string in the asset links', { android_asset_links: ['statement'] }, 'android_asset_links.0'],
    [
      'an Apple file over 32768 bytes',
      { apple_app_site_association: { applinks: { padding: 'x'.repeat(33_000) } } },
      'apple_app_site_association',
    ],
    [
      'asset links nested 40 levels deep',
      { android_asset_links: [JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`)] },
      'android_asset_links',
    ],
  ])('when a domain is given %s, then 400 VALIDATION_ERROR names it and nothing changes', async (_, payload, field) => {
    const domain = await verifiedDomain(d, owner.token, { apple_app_site_association: aasa('com.example.keep') });
    const res = await d.t.request({ method: 'PATCH', url: `${DOMAINS}/${domain.id}`, token: owner.token, payload });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toContain(field);
    const instance = await patchInstance(payload);
    expect(expectEnvelope(instance, 400, 'VALIDATION_ERROR')).toContain(field);
    const created = await d.t.request({
      method: 'POST',
      url: DOMAINS,
      token: owner.token,
      payload: { hostname: `new-${domain.hostname}`, ...payload },
    });
    expect(expectEnvelope(created, 400, 'VALIDATION_ERROR')).toContain(field);
    expect(JSON.parse((await get(AASA_PATH, domain.hostname)).text)).toEqual(aasa('com.example.keep'));
  });

  it('when someone other than an admin patches the instance, then 401 or 403 and nothing changes', async () => {
    const before = (await d.t.request({ url: '/api/v1/instance' })).body;
    expectEnvelope(await patchInstance({ android_asset_links: assetLinks('x') }, owner.token), 403, 'FORBIDDEN');
    const anonymous = await d.t.request({
      method: 'PATCH',
      url: '/api/v1/instance',
      payload: { android_asset_links: assetLinks('x') },
    });
    expectEnvelope(anonymous, 401, 'UNAUTHENTICATED');
    expect((await d.t.request({ url: '/api/v1/instance' })).body).toEqual(before);
  });

  it('when a short link exists, then the well-known paths are not codes: a code cannot hold a dot or a slash', async () => {
    const res = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/x', short_code: 'assetlinks.json' },
    });
    expectEnvelope(res, 400, 'VALIDATION_ERROR');
    const alias = await d.t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/x', aliases: ['.well-known'] },
    });
    expectEnvelope(alias, 400, 'VALIDATION_ERROR');
  });

  it("when the domain's verification proof is asked for, then it still answers beside the app links", async () => {
    const domain = await verifiedDomain(d, owner.token, { android_asset_links: assetLinks('com.example.proof') });
    const proof = await get(domain.verification.http_path, domain.hostname);
    expect(proof.status).toBe(200);
    expect(proof.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect((await get(ASSET_LINKS_PATH, domain.hostname)).status).toBe(200);
  });
});
