import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';

/** SPEC §18 moderation: the admin's list of every link, and disabled links (410 LINK_DISABLED). */
describe.each(engines)('moderation on %s', (engine) => {
  let base: string;
  let tagSeq = 0;
  const t = useTestApp(engine, { redisUrl: '' });
  const admin = useUser(t, { role: 'admin' });
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });

  /** A tag no other test uses: the admin list holds every test's links. */
  const freshTag = () => `m${(tagSeq += 1)}-${Math.random().toString(36).slice(2, 8)}`;
  const create = async (payload: Record<string, unknown>, token?: string) => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: 'https://example.com/m', ...payload },
      ...(token ? { token } : {}),
    });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: number; short_code: string; user_id: number | null };
  };
  const patch = (code: string, body: Record<string, unknown>, token: string, version = 1) =>
    t.request({ method: 'PATCH', url: `/api/v${version}/links/${code}`, payload: body, token });
  const all = (query: string, token = admin.token, version = 1) =>
    t.request({ url: `/api/v${version}/links?${query}`, token });
  const codes = (res: { body: { data: Array<{ short_code?: string; shortCode?: string }> } }) =>
    res.body.data.map((l) => l.short_code ?? l.shortCode).sort();

  describe('GET /links', () => {
    it("when an admin lists, then every user's links and anonymous ones, in pages with totals; filters by owner, tag and text", async () => {
      const [u1, u2] = [await createUser(t), await createUser(t)];
      const tag = freshTag();
      const a = await create({ tags: [tag], title: 'Spring sale' }, u1.token);
      const b = await create({ tags: [tag], original_url: 'https://shop.example/b' }, u2.token);
      const c = await create({ tags: [tag] });
      const page1 = await all(`tag=${tag}&limit=2`);
      expect(page1.status).toBe(200);
      expect(page1.body.pagination).toMatchObject({ page: 1, limit: 2, total: 3, totalPages: 2 });
      expect(page1.headers.link).toMatch(/rel="next"/);
      const page2 = await all(`tag=${tag}&limit=2&page=2`);
      expect([...codes(page1), ...codes(page2)].sort()).toEqual([a.short_code, b.short_code, c.short_code].sort());
      expect(codes(await all(`tag=${tag}&user_id=${u2.id}`))).toEqual([b.short_code]);
      expect(codes(await all(`tag=${tag}&q=SHOP.example`))).toEqual([b.short_code]);
      expect(codes(await all(`tag=${tag}&q=spring`))).toEqual([a.short_code]);
    });

    it('when sorted and paged by cursor, then the order holds across pages; v2 is camelCase and cursor only', async () => {
      const tag = freshTag();
      const made = [];
      for (let i = 0; i < 3; i += 1) made.push(await create({ tags: [tag] }));
      const first = await all(`tag=${tag}&sort=created_at&order=desc&limit=2`);
      expect(first.body.data.map((l: { id: number }) => l.id)).toEqual([made[2]!.id, made[1]!.id]);
      const v2 = await all(`tag=${tag}&sort=createdAt&order=desc&limit=2`, admin.token, 2);
      expect(v2.status).toBe(200);
      expect(v2.body.data[0]).toMatchObject({ shortCode: made[2]!.short_code, disabled: false, disabledReason: null });
      expect(v2.body.pagination.nextCursor).toEqual(expect.any(String));
      const next = await all(
        `tag=${tag}&sort=createdAt&order=desc&limit=2&cursor=${v2.body.pagination.nextCursor}`,
        admin.token,
        2,
      );
      expect(next.body.data.map((l: { id: number }) => l.id)).toEqual([made[0]!.id]);
      expect(next.body.pagination.nextCursor).toBeNull();
      expectEnvelope(await all(`tag=${tag}&page=2`, admin.token, 2), 400, 'VALIDATION_ERROR');
      expect(codes(await all(`tag=${tag}&userId=999999`, admin.token, 2))).toEqual([]);
    });

    it('when filtered by status, then active, expired (not yet swept) and disabled links apart', async () => {
      const tag = freshTag();
      const live = await create({ tags: [tag] });
      const expiring = await create({ tags: [tag], expires_at: new Date(t.clock.now() + 60_000).toISOString() });
      const disabled = await create({ tags: [tag] });
      expect((await patch(disabled.short_code, { disabled: true }, admin.token)).status).toBe(200);
      // Past its expiry; the sweep (every minute of real time) has not removed it yet.
      t.clock.advance(61_000);
      expect(codes(await all(`tag=${tag}&status=active`))).toEqual([live.short_code]);
      expect(codes(await all(`tag=${tag}&status=expired`))).toEqual([expiring.short_code]);
      expect(codes(await all(`tag=${tag}&status=disabled`))).toEqual([disabled.short_code]);
      expect(codes(await all(`tag=${tag}`))).toEqual(
        [live.short_code, expiring.short_code, disabled.short_code].sort(),
      );
      expectEnvelope(await all('status=gone'), 400, 'VALIDATION_ERROR');
    });

    it('when a non-admin or nobody lists every link, then 403 or 401', async () => {
      const u = await createUser(t);
      expectEnvelope(await all('', u.token), 403, 'FORBIDDEN');
      expectEnvelope(await t.request({ url: '/api/v1/links' }), 401, 'UNAUTHENTICATED');
    });
  });

  describe('disabled links', () => {
    it('when an admin disables a link with a reason, then the record says so and visits answer 410 LINK_DISABLED (JSON, or a page for browsers), at once also on the fast path', async () => {
      const u = await createUser(t);
      const link = await create({ original_url: 'https://phish.example/login' }, u.token);
      expect((await fetch(`${base}/${link.short_code}`, { redirect: 'manual' })).status).toBe(302); // now in the cache
      const res = await patch(
        link.short_code,
        { disabled: true, disabled_reason: 'Phishing (report 42)' },
        admin.token,
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        disabled: true,
        disabled_reason: 'Phishing (report 42)',
        original_url: 'https://phish.example/login',
      });
      const overSocket = await fetch(`${base}/${link.short_code}`, { redirect: 'manual' });
      expect(overSocket.status).toBe(410);
      expect(((await overSocket.json()) as { error: { code: string } }).error.code).toBe('LINK_DISABLED');
      expectEnvelope(await t.request({ url: `/${link.short_code}` }), 410, 'LINK_DISABLED');
      const page = await t.request({ url: `/${link.short_code}`, headers: { accept: 'text/html' } });
      expect(page.status).toBe(410);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('Link disabled');
      expect(page.text).not.toContain('Phishing');
      expect((await t.request({ url: `/api/v1/links/${link.short_code}`, token: u.token })).body).toMatchObject({
        disabled: true,
        disabled_reason: 'Phishing (report 42)',
      });
      expect((await t.request({ url: `/api/v2/links/${link.short_code}`, token: u.token })).body).toMatchObject({
        disabled: true,
        disabledReason: 'Phishing (report 42)',
      });
    });

    it('when an admin enables it again, then it redirects again at once and the reason is gone', async () => {
      const link = await create({ original_url: 'https://example.com/back' });
      await patch(link.short_code, { disabled: true, disabled_reason: 'Checking' }, admin.token);
      expect((await fetch(`${base}/${link.short_code}`, { redirect: 'manual' })).status).toBe(410);
      const res = await patch(link.short_code, { disabled: false }, admin.token, 2);
      expect(res.body).toMatchObject({ disabled: false, disabledReason: null });
      const visit = await fetch(`${base}/${link.short_code}`, { redirect: 'manual' });
      expect(visit.status).toBe(302);
      expect(visit.headers.get('location')).toBe('https://example.com/back');
    });

    it('when the owner sends another disabled value (or reason), then 403 naming the field and nothing changes; echoing the current values is fine', async () => {
      const u = await createUser(t);
      const link = await create({}, u.token);
      expect(expectEnvelope(await patch(link.short_code, { disabled: true }, u.token), 403, 'FORBIDDEN')).toEqual([
        'disabled',
      ]);
      expect(
        (await patch(link.short_code, { disabled: false, disabled_reason: null, title: 'Mine' }, u.token)).status,
      ).toBe(200);
      await patch(link.short_code, { disabled: true, disabled_reason: 'Spam' }, admin.token);
      expect(expectEnvelope(await patch(link.short_code, { disabled: false }, u.token), 403, 'FORBIDDEN')).toEqual([
        'disabled',
      ]);
      expect(
        expectEnvelope(await patch(link.short_code, { disabled_reason: 'Not spam' }, u.token), 403, 'FORBIDDEN'),
      ).toEqual(['disabled_reason']);
      expect(
        expectEnvelope(await patch(link.short_code, { disabledReason: null }, u.token, 2), 403, 'FORBIDDEN'),
      ).toEqual(['disabledReason']);
      expect((await t.request({ url: `/api/v1/links/${link.short_code}`, token: u.token })).body).toMatchObject({
        disabled: true,
        disabled_reason: 'Spam',
        title: 'Mine',
      });
      expect((await t.request({ url: `/${link.short_code}` })).status).toBe(410);
    });

    it('when an admin gives a reason to a link that stays enabled, then 400 naming it; a too long reason is 400 too', async () => {
      const link = await create({});
      expect(
        expectEnvelope(await patch(link.short_code, { disabled_reason: 'why' }, admin.token), 400, 'VALIDATION_ERROR'),
      ).toEqual(['disabled_reason']);
      expect(
        expectEnvelope(
          await patch(link.short_code, { disabled: true, disabled_reason: 'x'.repeat(501) }, admin.token),
          400,
          'VALIDATION_ERROR',
        ),
      ).toEqual(['disabled_reason']);
      expect((await t.request({ url: `/${link.short_code}` })).status).toBe(302);
    });

    it('when a disabled link is disabled again with a new reason, then the reason changes and the time it was first disabled stays', async () => {
      const link = await create({});
      await patch(link.short_code, { disabled: true, disabled_reason: 'First' }, admin.token);
      const first = await t.storage.db
        .selectFrom('links')
        .select('disabled_at')
        .where('id', '=', link.id)
        .executeTakeFirstOrThrow();
      t.clock.advance(1_000);
      const res = await patch(link.short_code, { disabled_reason: 'Second' }, admin.token);
      expect(res.body).toMatchObject({ disabled: true, disabled_reason: 'Second' });
      const second = await t.storage.db
        .selectFrom('links')
        .select('disabled_at')
        .where('id', '=', link.id)
        .executeTakeFirstOrThrow();
      expect(Number(second.disabled_at)).toBe(Number(first.disabled_at));
    });
  });
});
