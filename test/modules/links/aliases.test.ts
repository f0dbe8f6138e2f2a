import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestApp } from '../../helpers/app.js';
import { clickCounts, clickRecords, createUser, HUMAN_UA } from '../../helpers/factories.js';
import { useUser } from '../../helpers/fixtures.js';
import { verifiedDomain, type CreatedDomain, useDomainTestApp } from '../domains/domains.helpers.js';
import { encodeClick, decodeClickJson } from '../../../src/modules/clicks/transport/click-stream.js';
import { appOnSocket, LINKS, patchLink } from './links.helpers.js';

/** An alias no other test uses (hyphenated, longer than a code may be). */
const uniqueAlias = (prefix = 'sale'): string => `${prefix}-${randomBytes(5).toString('hex')}`;

describe.each(engines)('aliases on %s', (engine) => {
  const d = useDomainTestApp(engine);
  const owner = useUser(d);
  let t: TestApp;
  let domain: CreatedDomain;
  beforeAll(async () => {
    t = d.t;
    domain = await verifiedDomain(d, owner.token);
  });

  const create = (payload: Record<string, unknown>, url = LINKS) =>
    t.request({
      method: 'POST',
      url,
      token: owner.token,
      payload: { original_url: 'https://example.com/target', ...payload },
    });
  const created = async (payload: Record<string, unknown>) => {
    const res = await create(payload);
    expect(res.status, res.text).toBe(201);
    return res.body as { id: number; short_code: string; short_url: string; aliases: string[] };
  };
  const visit = (name: string, host = 'fry.example') =>
    t.request({ url: `/${name}`, headers: { host, 'user-agent': HUMAN_UA } });

  it('when a link is created with aliases, then v1 and v2 records carry them, each alias redirects like the code and counts for the link, and the click record notes the alias', async () => {
    const [a, b] = [uniqueAlias('summer'), `S_${randomBytes(4).toString('hex')}`];
    const link = await created({ aliases: [a, b, a], original_url: 'https://example.com/summer' });
    expect(link.aliases).toEqual([a, b]);
    const v2 = await t.request({ url: `/api/v2/links/${link.short_code}`, token: owner.token });
    expect(v2.body.aliases).toEqual([a, b]);

    const byAlias = await visit(a);
    expect(byAlias.status).toBe(302);
    expect(byAlias.headers.location).toBe('https://example.com/summer');
    expect(byAlias.headers['cache-control']).toBe('private, no-store');
    expect((await visit(link.short_code)).headers.location).toBe('https://example.com/summer');
    expect((await visit(a.toUpperCase())).status).toBe(404); // case-sensitive

    expect(await clickCounts(t, link.id)).toEqual({ records: 2, clickCount: 2 });
    const records = await clickRecords(t, link.id);
    expect(records.map((r) => [r.short_code, r.alias])).toEqual([
      [link.short_code, a],
      [link.short_code, null],
    ]);
    const json = await t.request({ url: `${LINKS}/${link.short_code}/clicks`, token: owner.token });
    expect(json.body.data.map((r: { alias: string | null }) => r.alias)).toEqual([null, a]);
    const csv = await t.request({
      url: `${LINKS}/${link.short_code}/clicks`,
      token: owner.token,
      headers: { accept: 'text/csv' },
    });
    const [header, ...rows] = csv.text.split('\r\n');
    expect(header!.split(',')).toContain('alias');
    expect(rows.filter((r) => r.includes(`,${a}`))).toHaveLength(1);
  });

  it('when PATCH replaces the aliases, then removed ones stop redirecting and stay retired for other links, and the link may take one back', async () => {
    const [keep, drop, add] = [uniqueAlias('keep'), uniqueAlias('drop'), uniqueAlias('add')];
    const link = await created({ aliases: [keep, drop] });
    expect((await visit(drop)).status).toBe(302); // cached now: the PATCH must drop it
    const patched = await patchLink(
      t,
      link.short_code,
      { aliases: [keep, add], original_url: 'https://example.com/moved' },
      { token: owner.token },
    );
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.aliases).toEqual([keep, add]);
    expect((await visit(drop)).status).toBe(404);
    expect((await visit(keep)).headers.location).toBe('https://example.com/moved');
    expect((await visit(add)).headers.location).toBe('https://example.com/moved');

    const other = await create({ aliases: [drop] });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('CONFLICT');
    const back = await patchLink(t, link.short_code, { aliases: [drop] }, { token: owner.token });
    expect(back.status, back.text).toBe(200);
    expect((await visit(drop)).headers.location).toBe('https://example.com/moved');
    expect((await visit(keep)).status).toBe(404);

    const cleared = await patchLink(t, link.short_code, { aliases: null }, { token: owner.token });
    expect(cleared.body.aliases).toEqual([]);
    expect((await visit(drop)).status).toBe(404);
  });

  it('when a link is deleted, then its aliases are tombstones: 404 on visit, and no other link may take them', async () => {
    const alias = uniqueAlias('gone');
    const link = await created({ aliases: [alias] });
    expect((await t.request({ method: 'DELETE', url: `${LINKS}/${link.short_code}`, token: owner.token })).status).toBe(
      204,
    );
    expect((await visit(alias)).status).toBe(404);
    expect((await create({ aliases: [alias] })).status).toBe(409);
  });

  it('when an alias meets a code on the same domain, then either way round it answers 409 CONFLICT, as a taken custom code does', async () => {
    const code = randomBytes(3).toString('hex');
    await created({ short_code: code });
    const aliasOnCode = await create({ aliases: [code] });
    expect(aliasOnCode.status).toBe(409);
    expect(aliasOnCode.body.error).toMatchObject({ code: 'CONFLICT', details: [{ field: 'aliases' }] });

    const alias = randomBytes(3).toString('hex');
    await created({ aliases: [alias] });
    const codeOnAlias = await create({ short_code: alias });
    expect(codeOnAlias.status).toBe(409);
    expect(codeOnAlias.body.error.code).toBe('CONFLICT');
    const link = await created({});
    expect((await patchLink(t, link.short_code, { aliases: [alias] }, { token: owner.token })).status).toBe(409);
  });

  it('when the same alias is on two domains, then both are created and each host redirects to its own link', async () => {
    const alias = uniqueAlias('both');
    const onDefault = await created({ aliases: [alias], original_url: 'https://example.com/default' });
    const onDomain = await created({
      aliases: [alias],
      original_url: 'https://example.com/custom',
      domain: domain.hostname,
    });
    expect(onDefault.aliases).toEqual([alias]);
    expect(onDomain.short_url).toBe(`https://${domain.hostname}/${onDomain.short_code}`);
    expect((await visit(alias)).headers.location).toBe('https://example.com/default');
    expect((await visit(alias, domain.hostname)).headers.location).toBe('https://example.com/custom');
  });

  it('when aliases break the rules, then 400 VALIDATION_ERROR names them: reserved paths, 11 aliases, bad characters, 65 characters, the own code', async () => {
    const bad: unknown[] = [
      ['docs'],
      ['API'],
      Array.from({ length: 11 }, (_, i) => `a${i}-${randomBytes(2).toString('hex')}`),
      ['a b'],
      ['a.b'],
      ['ü'],
      ['x'.repeat(65)],
      [''],
      'one',
    ];
    for (const aliases of bad) {
      const res = await create({ aliases });
      expect(res.status, JSON.stringify(aliases)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.error.details)).toContain('aliases');
    }
    const own = await create({ short_code: 'own1', aliases: ['own1'] });
    expect(own.status).toBe(400);
    const link = await created({});
    expect((await patchLink(t, link.short_code, { aliases: ['healthz'] }, { token: owner.token })).status).toBe(400);
    expect((await patchLink(t, link.short_code, { aliases: [link.short_code] }, { token: owner.token })).status).toBe(
      400,
    );
  });

  it('when two creations race for one alias, then one gets 201 and the other 409', async () => {
    const alias = uniqueAlias('race');
    const answers = await Promise.all([create({ aliases: [alias] }), create({ aliases: [alias] })]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
    expect((await visit(alias)).status).toBe(302);
  });

  it('when a link moves to another domain, then its aliases move with it and stay retired on the old one', async () => {
    const alias = uniqueAlias('moved');
    const link = await created({ aliases: [alias], original_url: 'https://example.com/moving' });
    expect((await visit(alias)).status).toBe(302);
    const moved = await patchLink(t, link.short_code, { domain: domain.hostname }, { token: owner.token });
    expect(moved.status, moved.text).toBe(200);
    expect((await visit(alias)).status).toBe(404);
    expect((await visit(alias, domain.hostname)).headers.location).toBe('https://example.com/moving');
    expect((await create({ aliases: [alias] })).status).toBe(409);
  });

  it("when q names part of an alias (any case), then the user's list and the admin's list find the link by it, in v1 and v2; a q spanning two aliases finds nothing", async () => {
    const admin = await createUser(t, { role: 'admin' });
    const slug = `Old-Slug-${randomBytes(4).toString('hex')}`;
    const other = uniqueAlias('other');
    const link = await created({ aliases: [other, slug], original_url: 'https://example.com/imported' });
    const decoy = await created({ original_url: 'https://example.com/decoy' });
    const codes = (res: Awaited<ReturnType<typeof t.request>>) => {
      expect(res.status, res.text).toBe(200);
      return res.body.data.map((l: { short_code?: string; shortCode?: string }) => l.short_code ?? l.shortCode);
    };
    const needle = encodeURIComponent(slug.slice(4).toLowerCase()); // "slug-…": neither the URL, the code nor a title holds it
    for (const version of [1, 2]) {
      expect(
        codes(await t.request({ url: `/api/v${version}/users/me/links?q=${needle}`, token: owner.token })),
      ).toEqual([link.short_code]);
      expect(codes(await t.request({ url: `/api/v${version}/links?q=${needle}`, token: admin.token }))).toEqual([
        link.short_code,
      ]);
    }
    expect(
      codes(
        await t.request({
          url: `/api/v1/links?q=${encodeURIComponent(other)}&user_id=${owner.id}`,
          token: admin.token,
        }),
      ),
    ).toEqual([link.short_code]);
    // The record keeps its aliases comma-separated: a q across the seam is no alias.
    const seam = encodeURIComponent(`${other.slice(-3)},${slug.slice(0, 3)}`);
    expect(codes(await t.request({ url: `/api/v1/users/me/links?q=${seam}`, token: owner.token }))).toEqual([]);
    expect(codes(await t.request({ url: `/api/v1/users/me/links?q=decoy`, token: owner.token }))).toEqual([
      decoy.short_code,
    ]);
  });

  it('when a bulk creation carries aliases, then each item is created or refused on its own', async () => {
    const [a, b] = [uniqueAlias('bulk'), uniqueAlias('bulk')];
    const res = await t.request({
      method: 'POST',
      url: `${LINKS}/bulk`,
      token: owner.token,
      payload: {
        links: [
          { original_url: 'https://example.com/1', aliases: [a] },
          { original_url: 'https://example.com/2', aliases: [a] },
          { original_url: 'https://example.com/3', aliases: [b] },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((r: { status: number }) => r.status)).toEqual([201, 409, 201]);
    expect(res.body.data[2].link.aliases).toEqual([b]);
    expect((await visit(b)).headers.location).toBe('https://example.com/3');
  });
});

describe.each(engines)('aliases on the redirect fast path on %s', (engine) => {
  it('when a cached alias is visited over a socket, then the fast path redirects it and the click notes the alias', async () => {
    const { t, base } = await appOnSocket(engine);
    try {
      const alias = uniqueAlias('fast');
      const res = await t.request({
        method: 'POST',
        url: LINKS,
        payload: { original_url: 'https://example.com/fast-alias', aliases: [alias] },
      });
      expect(res.status, res.text).toBe(201);
      expect((await t.request({ url: `/${alias}` })).status).toBe(302); // through the route: now cached
      const fastPath = async () =>
        Number(/^ferry_redirect_fast_path_total (\d+)$/m.exec((await t.request({ url: '/metrics' })).text)?.[1] ?? 0);
      const before = await fastPath();
      const fast = await fetch(`${base}/${alias}`, { redirect: 'manual', headers: { 'user-agent': HUMAN_UA } });
      expect(fast.status).toBe(302);
      expect(fast.headers.get('location')).toBe('https://example.com/fast-alias');
      expect(await fastPath()).toBe(before + 1);
      expect((await clickRecords(t, res.body.id)).map((r) => r.alias)).toEqual([alias, alias]);
    } finally {
      await t.close();
    }
  });
});

describe('the click stream and journal encoding', () => {
  it('when a click came through an alias, then it travels with it; through the code, the entry keeps its 9 items', () => {
    const click = {
      key: 'k1',
      linkId: 7,
      shortCode: 'abc',
      clickedAt: 1,
      ip: null,
      userAgent: null,
      referrer: null,
      country: null,
      visitor: null,
    };
    expect(decodeClickJson(encodeClick({ ...click, alias: 'summer-sale' }))).toEqual({
      ...click,
      alias: 'summer-sale',
    });
    expect(JSON.parse(encodeClick(click))).toHaveLength(9);
    expect(decodeClickJson(encodeClick(click))).toEqual(click);
  });
});
