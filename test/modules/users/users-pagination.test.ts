import { beforeEach, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';

type Role = 'user' | 'admin';
type Status = 'pending' | 'active' | 'suspended';
interface Seed {
  username: string;
  role?: Role;
  status?: Status;
  createdAt?: number;
}

/**
 * SPEC §7 on GET /api/v1/users. Every test starts from a users table holding only the admin, so totals are
 * exact (one app per engine: a fresh database per test cost most of this file's time); rows are inserted
 * directly (no scrypt per row) because listing is what is under test here.
 */
describe.each(engines)('users collection on %s', (engine) => {
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });
  beforeEach(async () => {
    await t.storage.db.deleteFrom('users').where('id', '!=', admin.id).execute();
  });

  const base = 1_800_000_000_000;
  async function seed(rows: Seed[]): Promise<number[]> {
    const ids: number[] = [];
    for (const [i, r] of rows.entries()) {
      const at = r.createdAt ?? base + i * 1000;
      const row = await t.storage.db
        .insertInto('users')
        .values({
          username: r.username,
          username_lower: r.username.toLowerCase(),
          email: `${r.username}@example.com`,
          email_lower: `${r.username.toLowerCase()}@example.com`,
          password_hash: 'scrypt$x',
          role: r.role ?? 'user',
          status: r.status ?? 'pending',
          name: null,
          age: null,
          version: 1,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(row.id);
    }
    return ids;
  }
  const names = (n: number, prefix = 'p') =>
    Array.from({ length: n }, (_, i) => ({ username: `${prefix}${String(i).padStart(3, '0')}` }));
  const list = (query: string) => t.request({ url: `/api/v1/users${query}`, token: admin.token });
  const linkRels = (header: unknown): Record<string, string> =>
    Object.fromEntries([...String(header ?? '').matchAll(/<([^>]+)>;\s*rel="(\w+)"/g)].map((m) => [m[2]!, m[1]!]));

  /** Follows nextCursor to the end; `between` runs after every page. */
  async function walk(query: string, between?: (page: number) => Promise<void>): Promise<number[]> {
    const seen: number[] = [];
    let res = await list(query);
    for (let page = 0; page < 100; page++) {
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.data.map((u: { id: number }) => u.id));
      const next = res.body.pagination.nextCursor as string | null;
      if (next === null) return seen;
      await between?.(page);
      res = await list(`${query}${query ? '&' : '?'}cursor=${encodeURIComponent(next)}`);
      expect(Object.keys(res.body.pagination).sort()).toEqual(['limit', 'nextCursor']);
    }
    throw new Error('cursor walk did not end');
  }

  it('when page mode is used, then page, limit, total, totalPages, nextCursor and Link next/prev/first are right', async () => {
    await seed(names(7)); // + the admin: 8 users
    const p1 = await list('?limit=3');
    expect(p1.status).toBe(200);
    expect(p1.body.data).toHaveLength(3);
    expect(p1.body.pagination).toEqual({ page: 1, limit: 3, total: 8, totalPages: 3, nextCursor: expect.any(String) });
    expect(linkRels(p1.headers.link)).toEqual({
      next: '/api/v1/users?limit=3&page=2',
      first: '/api/v1/users?limit=3&page=1',
    });

    const p2 = await list('?limit=3&page=2');
    expect(linkRels(p2.headers.link)).toEqual({
      next: '/api/v1/users?limit=3&page=3',
      prev: '/api/v1/users?limit=3&page=1',
      first: '/api/v1/users?limit=3&page=1',
    });
    const p3 = await list('?limit=3&page=3');
    expect(p3.body.data).toHaveLength(2);
    expect(p3.body.pagination).toEqual({ page: 3, limit: 3, total: 8, totalPages: 3, nextCursor: null });
    expect(linkRels(p3.headers.link)).toEqual({
      prev: '/api/v1/users?limit=3&page=2',
      first: '/api/v1/users?limit=3&page=1',
    });

    const all = [...p1.body.data, ...p2.body.data, ...p3.body.data].map((u) => u.id);
    expect(new Set(all).size).toBe(8);
    expect(all).toEqual([...all].sort((a, b) => a - b));

    const beyond = await list('?limit=3&page=9');
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination).toMatchObject({ page: 9, total: 8, totalPages: 3, nextCursor: null });
    expect(linkRels(beyond.headers.link).prev).toBe('/api/v1/users?limit=3&page=3');
  });

  it('when no paging parameter is sent, then page 1 with limit 20', async () => {
    await seed(names(24));
    const res = await list('');
    expect(res.body.data).toHaveLength(20);
    expect(res.body.pagination).toEqual({
      page: 1,
      limit: 20,
      total: 25,
      totalPages: 2,
      nextCursor: expect.any(String),
    });
  });

  it('when limit or page is out of bounds or not an integer, then 400 naming the parameter', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=1.5', 'limit=abc', 'limit=']) {
      expect(expectEnvelope(await list(`?${q}`), 400, 'VALIDATION_ERROR'), q).toEqual(['limit']);
    }
    for (const q of ['page=0', 'page=-2', 'page=x'])
      expect(expectEnvelope(await list(`?${q}`), 400, 'VALIDATION_ERROR'), q).toEqual(['page']);
    expect((await list('?limit=1')).body.data).toHaveLength(1);
    expect((await list('?limit=100')).body.pagination.limit).toBe(100);
  });

  it('when walking by cursor, then every user comes exactly once, in order, and the Link next works', async () => {
    const ids = [admin.id, ...(await seed(names(10)))];
    const seen = await walk('?limit=3');
    expect(seen).toEqual(ids);

    // Page 1 links to page 2; a cursor page links to the next cursor page, and back to the first page.
    const first = await list('?limit=4&sort=username');
    const second = await list(`?limit=4&sort=username&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
    const rels = linkRels(second.headers.link);
    expect(rels).toEqual({ next: expect.stringContaining('cursor='), first: '/api/v1/users?limit=4&sort=username' });
    expect(rels.next).not.toContain('page=');
    const viaLink = await t.request({ url: rels.next!, token: admin.token });
    expect(viaLink.status).toBe(200);
    expect(viaLink.body.data[0].username > second.body.data[3].username).toBe(true);
    const viaFirst = await t.request({ url: rels.first!, token: admin.token });
    expect(viaFirst.body.data).toEqual(first.body.data);
  });

  it('when page 1 hands out nextCursor, then the cursor continues exactly where page 2 would', async () => {
    await seed(names(9));
    const p1 = await list('?limit=4&sort=email&order=desc');
    const p2 = await list('?limit=4&sort=email&order=desc&page=2');
    const c2 = await list(`?limit=4&sort=email&order=desc&cursor=${encodeURIComponent(p1.body.pagination.nextCursor)}`);
    expect(c2.body.data).toEqual(p2.body.data);
  });

  it('when users are inserted between pages, then the walk still returns every original user exactly once', async () => {
    const original = await seed(names(12, 'm'));
    const extra = [...'abcdefghijklmnop'].map((c, i) => ({ username: `${i % 2 ? 'a' : 'z'}${c}${c}${c}` }));
    let n = 0;
    for (const sort of ['id', 'username', 'createdAt']) {
      for (const order of ['asc', 'desc']) {
        const seen = await walk(`?limit=3&sort=${sort}&order=${order}`, async () => {
          await seed(
            [extra[n % extra.length]!].map((e) => ({ username: `${e.username}${n++}`, createdAt: base + 500 })),
          );
        });
        expect(new Set(seen).size, `${sort} ${order}`).toBe(seen.length);
        for (const id of [admin.id, ...original]) expect(seen, `${sort} ${order}`).toContain(id);
      }
    }
  });

  it('when cursor and page are sent together, then 400', async () => {
    await seed(names(3));
    const p1 = await list('?limit=2');
    const res = await list(`?limit=2&page=1&cursor=${encodeURIComponent(p1.body.pagination.nextCursor)}`);
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['cursor']);
  });

  it('when a cursor is tampered with or invented, then 400 naming cursor', async () => {
    await seed(names(3));
    const cursor = (await list('?limit=2')).body.pagination.nextCursor as string;
    const [body, mac] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString()) as { i: number };
    const forged = Buffer.from(JSON.stringify({ ...decoded, i: decoded.i + 1 })).toString('base64url');
    const flip = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
    for (const bad of [
      `${forged}.${mac}`,
      `${body}.${flip(mac)}`,
      `${flip(body)}.${mac}`,
      body,
      'garbage',
      '.',
      `${body}.`,
      `${cursor}.x`,
      'a'.repeat(512),
    ]) {
      const res = await list(`?limit=2&cursor=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(expectEnvelope(res, 400, 'VALIDATION_ERROR'), bad).toEqual(['cursor']);
    }
  });

  it('when a cursor is reused with another sort, order or filter, then 400', async () => {
    await seed([
      ...names(4),
      { username: 'adm1', role: 'admin' },
      { username: 'adm2', role: 'admin' },
      { username: 'adm3', role: 'admin' },
    ]);
    const cursor = encodeURIComponent((await list('?limit=2&sort=username&role=admin')).body.pagination.nextCursor);
    expect((await list(`?limit=2&sort=username&role=admin&cursor=${cursor}`)).status).toBe(200);
    for (const q of [
      'sort=email&role=admin',
      'sort=username&order=desc&role=admin',
      'sort=username',
      'sort=username&role=user',
      'sort=username&role=admin&status=active',
    ]) {
      const res = await list(`?limit=2&${q}&cursor=${cursor}`);
      expect(expectEnvelope(res, 400, 'VALIDATION_ERROR'), q).toEqual(['cursor']);
    }
  });

  it('when sort or order is unknown, then 400 naming it', async () => {
    for (const q of ['sort=password', 'sort=password_hash', 'sort=created_at', 'sort=', 'sort=USERNAME']) {
      expect(expectEnvelope(await list(`?${q}`), 400, 'VALIDATION_ERROR'), q).toEqual(['sort']);
    }
    for (const q of ['order=up', 'order=ASC', 'order='])
      expect(expectEnvelope(await list(`?${q}`), 400, 'VALIDATION_ERROR'), q).toEqual(['order']);
  });

  it('when filtering by role and status, then only matching users are listed and counted', async () => {
    await seed([
      { username: 'f_user_pending' },
      { username: 'f_user_active', status: 'active' },
      { username: 'f_user_susp', status: 'suspended' },
      { username: 'f_admin_pending', role: 'admin' },
      { username: 'f_admin_susp', role: 'admin', status: 'suspended' },
    ]);
    const names = async (q: string) => {
      const res = await list(`?${q}&sort=username`);
      expect(res.body.pagination.total).toBe(res.body.data.length);
      return res.body.data.map((u: { username: string }) => u.username);
    };
    expect(await names('role=admin')).toEqual(['f_admin_pending', 'f_admin_susp', admin.username].sort());
    expect(await names('status=suspended')).toEqual(['f_admin_susp', 'f_user_susp']);
    expect(await names('role=user&status=active')).toEqual(['f_user_active']);
    expect(await names('role=admin&status=active')).toEqual([admin.username]);
    expect(expectEnvelope(await list('?status=deleted'), 400, 'VALIDATION_ERROR')).toEqual(['status']);
  });

  it('when sorting by username, email or createdAt in either order, then rows come in that order with id breaking ties', async () => {
    const tie = base + 5000;
    await seed([
      { username: 'kilo', createdAt: tie },
      { username: 'alpha', createdAt: base + 9000 },
      { username: 'zulu', createdAt: base + 1000 },
      { username: 'mike', createdAt: tie },
      { username: 'bravo', createdAt: tie },
      { username: 'echo', createdAt: base + 7000 },
    ]);
    const rows = (await list('?limit=100')).body.data as Array<{
      id: number;
      username: string;
      email: string;
      createdAt: string;
    }>;
    const by = <K extends 'username' | 'email' | 'createdAt'>(k: K, dir: 1 | -1) =>
      [...rows].sort((a, b) => (a[k] < b[k] ? -dir : a[k] > b[k] ? dir : (a.id - b.id) * dir)).map((r) => r.id);
    for (const sort of ['username', 'email', 'createdAt'] as const) {
      for (const [order, dir] of [
        ['asc', 1],
        ['desc', -1],
      ] as const) {
        const page = (await list(`?limit=100&sort=${sort}&order=${order}`)).body.data.map((u: { id: number }) => u.id);
        expect(page, `${sort} ${order}`).toEqual(by(sort, dir));
        expect(await walk(`?limit=2&sort=${sort}&order=${order}`), `walk ${sort} ${order}`).toEqual(by(sort, dir));
      }
    }
  });
});
