import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Paginator } from '../../../src/lib/pagination.js';
import { LinkCache } from '../../../src/modules/redirect/link-cache.js';
import { createLinksRepository } from '../../../src/modules/links/links.repository.js';
import { createLinksService } from '../../../src/modules/links/links.service.js';
import { createPasswordHasher } from '../../../src/modules/users/password.js';
import { createUsersRepository } from '../../../src/modules/users/users.repository.js';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';

describe.each(engines)('link lookup, deletion and listing on %s', (engine) => {
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });

  const create = async (payload: Record<string, unknown> = {}, token?: string) => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: 'https://example.com/x', ...payload },
      ...(token ? { token } : {}),
    });
    expect(res.status).toBe(201);
    return res.body as { id: number; short_code: string; user_id: number | null };
  };

  it('when anyone reads a link, then 200 with the record, an ETag and private caching', async () => {
    const link = await create();
    const res = await t.request({ url: `/api/v1/links/${link.short_code}` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: link.id, short_code: link.short_code, original_url: 'https://example.com/x' });
    expect(res.headers.etag).toBeDefined();
    expect(res.headers['cache-control']).toMatch(/private/);
  });

  it('when an unknown code is read, then 404 NOT_FOUND', async () => {
    const res = await t.request({ url: '/api/v1/links/zzzz9999' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  it('when the owner deletes their link, then 204, again 404, and the code cannot be taken again', async () => {
    const u = await createUser(t);
    const link = await create({}, u.token);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: u.token })).status,
    ).toBe(204);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: u.token })).status,
    ).toBe(404);
    expect((await t.request({ url: `/api/v1/links/${link.short_code}` })).status).toBe(404);
    const reuse = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: 'https://evil.example', short_code: link.short_code },
    });
    expect(reuse.status).toBe(409);
  });

  it('when another user deletes a link, then 403; without a token, then 401; an admin may, then 204', async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    const link = await create({}, owner.token);
    const forbidden = await t.request({
      method: 'DELETE',
      url: `/api/v1/links/${link.short_code}`,
      token: other.token,
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('FORBIDDEN');
    const anonymous = await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}` });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: admin.token })).status,
    ).toBe(204);
  });

  it('when a user deletes an anonymous link, then 403; an admin may', async () => {
    const u = await createUser(t);
    const link = await create();
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: u.token })).status,
    ).toBe(403);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: admin.token })).status,
    ).toBe(204);
  });

  it('when the owner is deleted, then their links stay, without an owner', async () => {
    const u = await createUser(t);
    const link = await create({}, u.token);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${u.id}`, token: u.token })).status).toBe(204);
    const res = await t.request({ url: `/api/v1/links/${link.short_code}` });
    expect(res.status).toBe(200);
    expect(res.body.user_id).toBeNull();
  });

  it('when a user lists their links, then only theirs, paginated with a Link header; others get 403', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    for (let i = 0; i < 5; i += 1) await create({ original_url: `https://example.com/${i}` }, u.token);
    await create({}, other.token);
    const page1 = await t.request({ url: `/api/v1/users/${u.id}/links?limit=2`, token: u.token });
    expect(page1.status).toBe(200);
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.pagination).toMatchObject({ page: 1, limit: 2, total: 5, totalPages: 3 });
    expect(page1.body.data.every((l: { user_id: number }) => l.user_id === u.id)).toBe(true);
    expect(page1.headers.link).toContain('rel="next"');
    const byCursor = await t.request({
      url: `/api/v1/users/${u.id}/links?limit=3&cursor=${page1.body.pagination.nextCursor}`,
      token: u.token,
    });
    expect(byCursor.status).toBe(200);
    expect(byCursor.body.data.map((l: { original_url: string }) => l.original_url)).toEqual([
      'https://example.com/2',
      'https://example.com/3',
      'https://example.com/4',
    ]);
    expect(byCursor.body.pagination.nextCursor).toBeNull();
    expect((await t.request({ url: `/api/v1/users/${u.id}/links`, token: other.token })).status).toBe(403);
    expect((await t.request({ url: `/api/v1/users/${u.id}/links` })).status).toBe(401);
    expect((await t.request({ url: `/api/v1/users/${u.id}/links?sort=clicks`, token: u.token })).status).toBe(400);
    const asAdmin = await t.request({
      url: `/api/v1/users/${u.id}/links?sort=created_at&order=desc`,
      token: admin.token,
    });
    expect(asAdmin.body.data[0].original_url).toBe('https://example.com/4');
  });

  it('when an admin lists the links of a user that does not exist, then 404', async () => {
    const res = await t.request({ url: '/api/v1/users/987654321/links', token: admin.token });
    expect(res.status).toBe(404);
  });

  it('when the generator draws a taken or deleted code, then it retries through the unique index and never reissues it', async () => {
    const live = await create();
    const u = await createUser(t);
    const deleted = await create({}, u.token);
    await t.request({ method: 'DELETE', url: `/api/v1/links/${deleted.short_code}`, token: u.token });
    const draws = [live.short_code, deleted.short_code, 'Fresh123'];
    const paginator = new Paginator(createHash('sha256').update('x').digest());
    const service = createLinksService({
      links: createLinksRepository(t.storage, paginator),
      users: createUsersRepository(t.storage.db, paginator),
      dialect: t.storage.dialect,
      clock: t.clock,
      paginator,
      cache: new LinkCache(t.clock),
      publicBaseUrl: t.config.publicBaseUrl,
      passwords: createPasswordHasher(10),
      generate: () => draws.shift()!,
    });
    const row = await service.create({ original_url: 'https://example.com/new' }, null);
    expect(row.short_code).toBe('Fresh123');
    expect(draws).toEqual([]);
    expect((await t.request({ url: `/api/v1/links/${deleted.short_code}` })).status).toBe(404);
  });
});
