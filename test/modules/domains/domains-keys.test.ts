import { beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useUser } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { addDomain, DOMAINS, type CreatedDomain, useDomainTestApp } from './domains.helpers.js';

const LINKS = '/api/v1/links';

describe.each(engines)('API keys limited to domains on %s', (engine) => {
  let mine: CreatedDomain;
  let other: CreatedDomain;
  let key: string;
  const d = useDomainTestApp(engine);
  const owner = useUser(d, { status: 'active' });
  beforeAll(async () => {
    mine = await addDomain(d.t, owner.token);
    other = await addDomain(d.t, owner.token);
    const made = await d.t.request({
      method: 'POST',
      url: `/api/v1/users/${owner.id}/api-keys`,
      token: owner.token,
      payload: { name: 'one domain', scopes: ['links:read', 'links:write'], domains: [mine.id] },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.domains).toEqual([mine.id]);
    key = made.body.key;
  });

  const create = (token: string, domain?: string) =>
    d.t.request({
      method: 'POST',
      url: LINKS,
      token,
      payload: { original_url: 'https://example.com/k', ...(domain ? { domain } : {}) },
    });

  it('when a limited key creates links, then only on its domains: elsewhere (the default domain included) 403 naming domain', async () => {
    expect((await create(key, mine.hostname)).status).toBe(201);
    for (const domain of [other.hostname, undefined]) {
      const res = await create(key, domain);
      expect(res.status, String(domain)).toBe(403);
      expect(res.body.error.details[0].field).toBe('domain');
    }
  });

  it('when a limited key reads, changes or lists, then it sees its domains only', async () => {
    const onOther = (await create(owner.token, other.hostname)).body;
    const onMine = (await create(owner.token, mine.hostname)).body;
    expect(
      (await d.t.request({ url: `${LINKS}/${onOther.short_code}?domain=${other.hostname}`, token: key })).status,
    ).toBe(403);
    expect(
      (
        await d.t.request({
          method: 'DELETE',
          url: `${LINKS}/${onOther.short_code}?domain=${other.hostname}`,
          token: key,
        })
      ).status,
    ).toBe(403);
    expect(
      (await d.t.request({ url: `${LINKS}/${onMine.short_code}?domain=${mine.hostname}`, token: key })).status,
    ).toBe(200);
    const list = await d.t.request({ url: `/api/v1/users/me/links?limit=100`, token: key });
    expect(list.status, list.text).toBe(200);
    expect(new Set(list.body.data.map((l: { domain: string }) => l.domain))).toEqual(new Set([mine.hostname]));
    // A search no index narrows (one character, in every URL here) counts the key's domains only, one asked for too;
    // the unlimited token counts the other domain's link as well.
    const total = async (query: string, token: string) => {
      const res = await d.t.request({ url: `/api/v1/users/me/links?limit=1&q=k${query}`, token });
      expect(res.status, res.text).toBe(200);
      return res.body.pagination.total as number;
    };
    expect(await total('', key)).toBe(list.body.pagination.total);
    expect(await total(`&domain=${mine.hostname}`, key)).toBe(list.body.pagination.total);
    expect(await total(`&domain=${other.hostname}`, owner.token)).toBe(1);
    // A key limited to both domains that asks for one: its total is that one's links, counted from the owners'
    // counters (no q) or from the search (one character), as the page's rows are.
    const both = await d.t.request({
      method: 'POST',
      url: `/api/v1/users/${owner.id}/api-keys`,
      token: owner.token,
      payload: { name: 'two domains', scopes: ['links:read'], domains: [mine.id, other.id] },
    });
    expect(both.status, both.text).toBe(201);
    for (const search of ['', '&q=k']) {
      const res = await d.t.request({
        url: `/api/v1/users/me/links?limit=100&domain=${other.hostname}${search}`,
        token: both.body.key,
      });
      expect(res.status, res.text).toBe(200);
      expect(
        res.body.data.map((l: { domain: string }) => l.domain),
        search,
      ).toEqual([other.hostname]);
      expect(res.body.pagination.total, search).toBe(1);
    }
    const domains = await d.t.request({ url: `${DOMAINS}?limit=100`, token: key });
    expect(domains.body.data.map((x: { id: number }) => x.id)).toEqual([mine.id]);
    expect((await d.t.request({ url: `${DOMAINS}/${other.id}`, token: key })).status).toBe(403);
  });

  it("when a key is limited to a domain that is not its user's, then 400 naming domains; an unlimited key has domains null", async () => {
    const stranger = await createUser(d.t, { status: 'active' });
    const theirs = await addDomain(d.t, stranger.token);
    const refused = await d.t.request({
      method: 'POST',
      url: `/api/v1/users/${owner.id}/api-keys`,
      token: owner.token,
      payload: { name: 'x', scopes: ['links:write'], domains: [theirs.id] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].field).toBe('domains');
    const plain = await d.t.request({
      method: 'POST',
      url: `/api/v1/users/${owner.id}/api-keys`,
      token: owner.token,
      payload: { name: 'y', scopes: ['links:write'] },
    });
    expect(plain.body.domains).toBeNull();
    expect((await create(plain.body.key, other.hostname)).status).toBe(201);
  });
});
