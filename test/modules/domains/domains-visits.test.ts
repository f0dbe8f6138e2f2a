import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { openEventsCursor } from '../../../src/db/events.js';
import { engines } from '../../helpers/app.js';
import { useUser } from '../../helpers/fixtures.js';
import { clickRecords, createUser } from '../../helpers/factories.js';
import { HUMAN_UA } from '../links/links.helpers.js';
import {
  addDomain,
  domainTestApp,
  DOMAINS,
  verifiedDomain,
  type CreatedDomain,
  useDomainTestApp,
} from './domains.helpers.js';

const LINKS = '/api/v1/links';

describe.each(engines)('visits by host on %s', (engine) => {
  let domain: CreatedDomain;
  const d = useDomainTestApp(engine);
  const owner = useUser(d, { status: 'active' });
  beforeAll(async () => {
    domain = await verifiedDomain(d, owner.token);
  });

  const create = async (payload: Record<string, unknown>) => {
    const res = await d.t.request({
      method: 'POST',
      url: LINKS,
      token: owner.token,
      payload: { original_url: 'https://example.com/x', ...payload },
    });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const visit = (path: string, host: string, headers: Record<string, string> = {}) =>
    d.t.request({ url: path, headers: { host, 'user-agent': HUMAN_UA, ...headers } });

  it('when the same code lives on two domains, then each host resolves its own link, and short_url names the domain', async () => {
    const code = `p${Math.random().toString(36).slice(2, 8)}`;
    const events = await openEventsCursor(d.t.storage.db, 'end');
    const onDefault = await create({ short_code: code, original_url: 'https://example.com/default' });
    const onDomain = await create({
      short_code: code,
      original_url: 'https://example.com/custom',
      domain: domain.hostname.toUpperCase(),
    });
    expect(onDefault).toMatchObject({ domain: null, short_url: `https://fry.example/${code}` });
    expect(onDomain).toMatchObject({ domain: domain.hostname, short_url: `https://${domain.hostname}/${code}` });
    // each link.created event (SPEC §22) carries the link as the API showed it, its domain's address included
    expect((await events.read()).map((e) => e.event.data)).toEqual([onDefault, onDomain]);
    expect((await visit(`/${code}`, domain.hostname)).headers.location).toBe('https://example.com/custom');
    expect((await visit(`/${code}`, `${domain.hostname.toUpperCase()}:443`)).headers.location).toBe(
      'https://example.com/custom',
    );
    expect((await visit(`/${code}`, 'fry.example')).headers.location).toBe('https://example.com/default');
    expect((await visit(`/${code}`, 'anything.else.test')).headers.location).toBe('https://example.com/default');
    const read = await d.t.request({ url: `${LINKS}/${code}?domain=${domain.hostname}`, token: owner.token });
    expect(read.body.original_url).toBe('https://example.com/custom');
    expect((await d.t.request({ url: `${LINKS}/${code}`, token: owner.token })).body.original_url).toBe(
      'https://example.com/default',
    );
    const stats = await d.t.request({ url: `${LINKS}/${code}/stats?domain=${domain.hostname}`, token: owner.token });
    expect(stats.status, stats.text).toBe(200);
    expect(
      (await d.t.request({ url: `${LINKS}/${code}/clicks?domain=${domain.hostname}`, token: owner.token })).status,
    ).toBe(200);
    expect(
      (await d.t.request({ url: `${LINKS}/${code}?domain=unknown.example.test`, token: owner.token })).status,
    ).toBe(404);
  });

  it("when a domain's host is visited for a code only the default domain has, then 404", async () => {
    const link = await create({});
    expect((await visit(`/${link.short_code}`, domain.hostname)).status).toBe(404);
  });

  it('when a domain is not verified, then its host resolves the default domain and its links serve no visits', async () => {
    const pending = await addDomain(d.t, owner.token);
    const code = `u${Math.random().toString(36).slice(2, 8)}`;
    await create({ short_code: code, original_url: 'https://example.com/pending', domain: pending.hostname });
    expect((await visit(`/${code}`, pending.hostname)).status).toBe(404);
    const fallback = await create({});
    expect((await visit(`/${fallback.short_code}`, pending.hostname)).headers.location).toBe('https://example.com/x');
  });

  it('when a domain has fallbacks, then they replace its 404 and 410 answers and GET / goes to root_redirect', async () => {
    const other = await verifiedDomain(d, owner.token, {
      not_found_redirect: 'https://example.com/404',
      expired_redirect: 'https://example.com/410',
    });
    expect((await visit('/nosuch1', other.hostname)).headers.location).toBe('https://example.com/404');
    const expiring = await create({
      domain: other.hostname,
      expires_at: new Date(d.t.clock.now() + 60_000).toISOString(),
    });
    d.t.clock.advance(61_000);
    const expired = await visit(`/${expiring.short_code}`, other.hostname);
    expect(expired.status).toBe(302);
    expect(expired.headers.location).toBe('https://example.com/410');
    expect((await visit('/', other.hostname)).status).toBe(404);
    await d.t.request({
      method: 'PATCH',
      url: `${DOMAINS}/${other.id}`,
      token: owner.token,
      payload: { root_redirect: 'https://example.com/home' },
    });
    const root = await visit('/', other.hostname);
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('https://example.com/home');
    expect((await visit('/', 'fry.example')).headers.location).toBe('/app');
    expect((await visit('/nosuch1', 'fry.example')).status).toBe(404);
  });

  it('when a link moves to another domain by PATCH, then it is served there and its old code is retired', async () => {
    const link = await create({});
    const moved = await d.t.request({
      method: 'PATCH',
      url: `${LINKS}/${link.short_code}`,
      token: owner.token,
      payload: { domain: domain.hostname },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.domain).toBe(domain.hostname);
    expect((await visit(`/${link.short_code}`, domain.hostname)).headers.location).toBe('https://example.com/x');
    expect((await visit(`/${link.short_code}`, 'fry.example')).status).toBe(404);
    const reuse = await d.t.request({
      method: 'POST',
      url: LINKS,
      payload: { original_url: 'https://evil.example/', short_code: link.short_code },
    });
    expect(reuse.status).toBe(409);
  });

  it('when another user names a domain that is not theirs, then 403 naming domain; an unknown one 400', async () => {
    const other = await createUser(d.t, { status: 'active' });
    const res = await d.t.request({
      method: 'POST',
      url: LINKS,
      token: other.token,
      payload: { original_url: 'https://example.com/', domain: domain.hostname },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.details[0].field).toBe('domain');
    const anon = await d.t.request({
      method: 'POST',
      url: LINKS,
      payload: { original_url: 'https://example.com/', domain: domain.hostname },
    });
    expect(anon.status).toBe(403);
    const unknown = await d.t.request({
      method: 'POST',
      url: LINKS,
      token: other.token,
      payload: { original_url: 'https://example.com/', domain: 'nope.example.test' },
    });
    expect(unknown.status).toBe(400);
    const bulk = await d.t.request({
      method: 'POST',
      url: `${LINKS}/bulk`,
      token: owner.token,
      payload: { links: [{ original_url: 'https://example.com/b', domain: domain.hostname }] },
    });
    expect(bulk.body.data[0]).toMatchObject({ status: 201, link: { domain: domain.hostname } });
  });

  it("when a user lists links by domain, then only that domain's come back", async () => {
    const mine = await create({ domain: domain.hostname });
    const list = await d.t.request({
      url: `/api/v1/users/me/links?domain=${domain.hostname}&limit=100`,
      token: owner.token,
    });
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.every((l: { domain: string }) => l.domain === domain.hostname)).toBe(true);
    expect(list.body.data.map((l: { id: number }) => l.id)).toContain(mine.id);
    const v2 = await d.t.request({
      url: `/api/v2/links/${mine.short_code}?domain=${domain.hostname}`,
      token: owner.token,
    });
    expect(v2.body).toMatchObject({
      domain: domain.hostname,
      shortUrl: `https://${domain.hostname}/${mine.short_code}`,
    });
  });
});

describe.each(engines)('X-Forwarded-Host and the fast path on %s', (engine) => {
  it('when a trusted proxy forwards the host, then it decides; from an untrusted client it is ignored', async () => {
    const trusting = await domainTestApp(engine, { env: { TRUST_PROXY: '127.0.0.1' } });
    const plain = await domainTestApp(engine);
    try {
      for (const [d, expected] of [
        [trusting, 'https://example.com/forwarded'],
        [plain, undefined],
      ] as const) {
        const owner = await createUser(d.t, { status: 'active' });
        const domain = await verifiedDomain(d, owner.token);
        const made = await d.t.request({
          method: 'POST',
          url: LINKS,
          token: owner.token,
          payload: { original_url: 'https://example.com/forwarded', domain: domain.hostname },
        });
        const res = await d.t.request({
          url: `/${made.body.short_code}`,
          headers: { host: 'fry.example', 'x-forwarded-host': domain.hostname, 'user-agent': HUMAN_UA },
        });
        expect(res.headers.location).toBe(expected);
      }
    } finally {
      await trusting.close();
      await plain.close();
    }
  });

  it(
    'when a cached link on a domain is visited over a socket, then the fast path answers by Host, ' +
      'and each click keeps its domain',
    async () => {
      const d = await domainTestApp(engine, { redisUrl: '' });
      try {
        await d.t.app.listen({ port: 0, host: '127.0.0.1' });
        const port = (d.t.app.server.address() as { port: number }).port;
        const owner = await createUser(d.t, { status: 'active' });
        const domain = await verifiedDomain(d, owner.token);
        const code = `f${Math.random().toString(36).slice(2, 8)}`;
        const onDefault = await d.t.request({
          method: 'POST',
          url: LINKS,
          token: owner.token,
          payload: { original_url: 'https://example.com/default', short_code: code },
        });
        const onDomain = await d.t.request({
          method: 'POST',
          url: LINKS,
          token: owner.token,
          payload: { original_url: 'https://example.com/fast', short_code: code, domain: domain.hostname },
        });
        const get = (host: string) =>
          new Promise<string | undefined>((resolve, reject) => {
            httpRequest({ host: '127.0.0.1', port, path: `/${code}`, headers: { host } }, (res) => {
              res.resume();
              resolve(res.headers.location);
            })
              .on('error', reject)
              .end();
          });
        for (let i = 0; i < 3; i += 1) {
          // the first visit fills the cache, the next ones are served from it
          expect(await get(domain.hostname)).toBe('https://example.com/fast');
          expect(await get(`127.0.0.1:${port}`)).toBe('https://example.com/default');
        }
        expect((await clickRecords(d.t, onDomain.body.id)).map((c) => c.domain)).toEqual([
          domain.hostname,
          domain.hostname,
          domain.hostname,
        ]);
        expect((await clickRecords(d.t, onDefault.body.id)).map((c) => c.domain)).toEqual([null, null, null]);
      } finally {
        await d.close();
      }
    },
  );
});
