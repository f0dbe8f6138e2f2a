import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestApp } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { appOnSocket, createLink, LINKS, patchLink, visit } from './links.helpers.js';

describe.each(engines)('PATCH /api/v1/links/{code} on %s', (engine) => {
  const t = useTestApp(engine);
  const owner = useUser(t);
  const admin = useUser(t, { role: 'admin', status: 'active' });

  it('when the owner changes the target, tags and limits, then 200 with the record, a new version ETag and updated_at, and GET agrees', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/typo' }, owner.token);
    const before = await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token });
    expect(before.headers.etag).toBe(`"link-${link.id}-v1"`);
    t.clock.advance(5_000);
    const res = await patchLink(
      t,
      link.short_code,
      {
        original_url: 'https://example.com/fixed',
        tags: ['Spring', 'promo', 'spring'],
        max_visits: 3,
        forward_query: true,
      },
      {
        token: owner.token,
        headers: { 'content-type': 'application/merge-patch+json' },
      },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      short_code: link.short_code,
      original_url: 'https://example.com/fixed',
      tags: ['spring', 'promo'],
      max_visits: 3,
      forward_query: true,
      has_password: false,
      created_at: before.body.created_at,
      updated_at: new Date(t.clock.now()).toISOString(),
    });
    expect(res.headers.etag).toBe(`"link-${link.id}-v2"`);
    const after = await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token });
    expect(after.body).toEqual(res.body);
    expect(after.headers.etag).toBe(res.headers.etag);
    expect(
      (
        await t.request({
          url: `${LINKS}/${link.short_code}`,
          token: owner.token,
          headers: { 'if-none-match': res.headers.etag as string },
        })
      ).status,
    ).toBe(304);
  });

  it('when merge-patch nulls are sent, then expiry, limit, tags and password are cleared; an empty patch changes nothing', async () => {
    const link = await createLink(
      t,
      {
        expires_at: new Date(t.clock.now() + 86_400_000).toISOString(),
        max_visits: 5,
        tags: ['a'],
        password: 'open-sesame-1',
      },
      owner.token,
    );
    const cleared = await patchLink(
      t,
      link.short_code,
      { expires_at: null, max_visits: null, tags: null, password: null },
      { token: owner.token },
    );
    expect(cleared.body).toMatchObject({ expires_at: null, max_visits: null, tags: [], has_password: false });
    const empty = await patchLink(t, link.short_code, {}, { token: owner.token });
    expect(empty.status).toBe(200);
    expect(empty.headers.etag).toBe(cleared.headers.etag);
  });

  it('when If-Match is stale, then 412 and nothing changes; with the current tag, then 200', async () => {
    const link = await createLink(t, {}, owner.token);
    const first = await patchLink(
      t,
      link.short_code,
      { original_url: 'https://example.com/one' },
      { token: owner.token },
    );
    const stale = await patchLink(
      t,
      link.short_code,
      { original_url: 'https://example.com/two' },
      { token: owner.token, headers: { 'if-match': `"link-${link.id}-v1"` } },
    );
    expect(expectEnvelope(stale, 412, 'PRECONDITION_FAILED')).toEqual(['If-Match']);
    expect((await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token })).body.original_url).toBe(
      'https://example.com/one',
    );
    const current = await patchLink(
      t,
      link.short_code,
      { original_url: 'https://example.com/two' },
      { token: owner.token, headers: { 'if-match': first.headers.etag as string } },
    );
    expect(current.status).toBe(200);
    expect(current.body.original_url).toBe('https://example.com/two');
  });

  it('when two PATCHes race with the same If-Match, then exactly one wins and the other is 412', async () => {
    const link = await createLink(t, {}, owner.token);
    const tag = `"link-${link.id}-v1"`;
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((s) =>
        patchLink(
          t,
          link.short_code,
          { original_url: `https://example.com/${s}` },
          { token: owner.token, headers: { 'if-match': tag } },
        ),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412]);
  });

  it('when short_code is sent, then the same value is accepted and another is 400; unknown fields are 400; read-only echoes are ignored', async () => {
    const link = await createLink(t, {}, owner.token);
    const same = await patchLink(
      t,
      link.short_code,
      {
        short_code: link.short_code,
        id: 1,
        click_count: 99,
        has_password: true,
        original_url: 'https://example.com/same',
      },
      { token: owner.token },
    );
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ id: link.id, click_count: 0, has_password: false });
    expect(
      expectEnvelope(
        await patchLink(t, link.short_code, { short_code: 'other1' }, { token: owner.token }),
        400,
        'VALIDATION_ERROR',
      ),
    ).toEqual(['short_code']);
    expect(
      expectEnvelope(
        await patchLink(t, link.short_code, { target: 'https://x.example' }, { token: owner.token }),
        400,
        'VALIDATION_ERROR',
      ),
    ).toEqual(['target']);
    expect((await t.request({ url: `/${link.short_code}` })).headers.location).toBe('https://example.com/same');
  });

  it('when values break the rules of creation, then 400 naming every field and nothing changes', async () => {
    const link = await createLink(t, {}, owner.token);
    const res = await patchLink(
      t,
      link.short_code,
      {
        original_url: `${t.config.publicBaseUrl}/abc`,
        expires_at: new Date(t.clock.now() - 1000).toISOString(),
      },
      { token: owner.token },
    );
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['expires_at', 'original_url']);
    const schema = await patchLink(
      t,
      link.short_code,
      { max_visits: 0, tags: ['no spaces'], password: 'short', forward_query: 'yes' },
      { token: owner.token },
    );
    expect(expectEnvelope(schema, 400, 'VALIDATION_ERROR')).toEqual([
      'forward_query',
      'max_visits',
      'password',
      'tags.0',
    ]);
    const tooMany = await patchLink(
      t,
      link.short_code,
      { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
      { token: owner.token },
    );
    expectEnvelope(tooMany, 400, 'VALIDATION_ERROR');
    const unchanged = await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token });
    expect(unchanged.headers.etag).toBe(`"link-${link.id}-v1"`);
  });

  it('when someone else, nobody or an unsupported format PATCHes, then 403, 401 or 415 with Accept-Patch; an admin may, also an anonymous link', async () => {
    const link = await createLink(t, {}, owner.token);
    const other = await createUser(t);
    expectEnvelope(
      await patchLink(t, link.short_code, { original_url: 'https://evil.example' }, { token: other.token }),
      403,
      'FORBIDDEN',
    );
    expectEnvelope(
      await patchLink(t, link.short_code, { original_url: 'https://evil.example' }),
      401,
      'UNAUTHENTICATED',
    );
    const text = await t.request({
      method: 'PATCH',
      url: `${LINKS}/${link.short_code}`,
      token: owner.token,
      payload: 'original_url=x',
      headers: { 'content-type': 'text/plain' },
    });
    expectEnvelope(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(text.headers['accept-patch']).toContain('application/merge-patch+json');
    expect((await patchLink(t, link.short_code, { tags: ['by-admin'] }, { token: admin.token })).status).toBe(200);
    const anonymous = await createLink(t);
    expect((await patchLink(t, anonymous.short_code, { tags: ['x'] }, { token: owner.token })).status).toBe(403);
    expect((await patchLink(t, anonymous.short_code, { tags: ['x'] }, { token: admin.token })).status).toBe(200);
  });

  it('when the link is expired or unknown, then 404', async () => {
    const link = await createLink(t, { expires_at: new Date(t.clock.now() + 1000).toISOString() }, owner.token);
    t.clock.advance(1000);
    expectEnvelope(await patchLink(t, link.short_code, { expires_at: null }, { token: owner.token }), 404, 'NOT_FOUND');
    expectEnvelope(await patchLink(t, 'nOsUch99', { tags: [] }, { token: admin.token }), 404, 'NOT_FOUND');
  });

  it('when a cached link is PATCHed, then the next visit on this instance goes to the new target', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/old' }, owner.token);
    expect((await visit(t, link.short_code)).headers.location).toBe('https://example.com/old');
    await patchLink(t, link.short_code, { original_url: 'https://example.com/new' }, { token: owner.token });
    expect((await visit(t, link.short_code)).headers.location).toBe('https://example.com/new');
  });

  it('when v2 is used, then the patch and the record are camelCase', async () => {
    const link = await createLink(t, {}, owner.token);
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v2/links/${link.short_code}`,
      token: owner.token,
      payload: { originalUrl: 'https://example.com/v2', maxVisits: 7, forwardQuery: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      shortCode: link.short_code,
      originalUrl: 'https://example.com/v2',
      maxVisits: 7,
      forwardQuery: true,
      hasPassword: false,
    });
    expect(res.body.updatedAt).toBeDefined();
    expect(
      (
        await t.request({
          method: 'PATCH',
          url: `/api/v2/links/${link.short_code}`,
          token: owner.token,
          payload: { max_visits: 1 },
        })
      ).status,
    ).toBe(400);
  });
});

/**
 * A PATCH racing visits, over a real socket so that cached visits take the fast path: every visit answers the
 * old or the new target, never an error, and once the PATCH has answered only the new one.
 */
describe.each(engines)('PATCH racing visits on %s', (engine) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await appOnSocket(engine));
  });
  afterAll(async () => t.close());

  it('when visits run while the target changes, then each answers the old or the new target, and after the answer only the new', async () => {
    const owner = await createUser(t);
    const link = await createLink(t, { original_url: 'https://example.com/old' }, owner.token);
    let patched = false;
    let stop = false;
    const seen: Array<{ afterPatch: boolean; status: number; location: string | null }> = [];
    const visitor = async () => {
      while (!stop) {
        const afterPatch = patched;
        const res = await fetch(`${base}/${link.short_code}`, { redirect: 'manual' });
        await res.arrayBuffer();
        seen.push({ afterPatch, status: res.status, location: res.headers.get('location') });
      }
    };
    const visitors = Array.from({ length: 8 }, visitor);
    while (seen.length < 20) await new Promise((resolve) => setTimeout(resolve, 10));
    const res = await patchLink(
      t,
      link.short_code,
      { original_url: 'https://example.com/new' },
      { token: owner.token },
    );
    patched = true;
    expect(res.status).toBe(200);
    // However slow the machine: enough visits that started after the answer.
    while (seen.filter((v) => v.afterPatch).length < 20) await new Promise((resolve) => setTimeout(resolve, 10));
    stop = true;
    await Promise.all(visitors);
    expect(
      seen.every((s) => s.status === 302),
      JSON.stringify(seen.filter((s) => s.status !== 302).slice(0, 3)),
    ).toBe(true);
    expect(
      seen.every((s) => s.location === 'https://example.com/old' || s.location === 'https://example.com/new'),
    ).toBe(true);
    const after = seen.filter((s) => s.afterPatch);
    expect(after.every((s) => s.location === 'https://example.com/new')).toBe(true);
    expect(seen.some((s) => !s.afterPatch && s.location === 'https://example.com/old')).toBe(true);
  });
});
