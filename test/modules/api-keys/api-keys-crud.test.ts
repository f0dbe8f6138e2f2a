import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { createApiKey, keysUrl } from './api-keys.helpers.js';

describe.each(engines)('API keys: create, read, revoke on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a user creates a key, then 201 with Location, the record and the key shown this once; only its hash is stored', async () => {
    const u = await createUser(t);
    const res = await t.request({
      method: 'POST',
      url: keysUrl(u.id),
      token: u.token,
      payload: { name: 'deploy', scopes: ['links:write', 'links:read'], expires_at: null },
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/api/v1/users/${u.id}/api-keys/${res.body.id}`);
    expect(res.body).toMatchObject({
      name: 'deploy',
      scopes: ['links:read', 'links:write'],
      expires_at: null,
      last_used_at: null,
    });
    expect(res.body.key).toMatch(/^fry_[0-9a-zA-Z]{40}$/);
    expect(res.body.prefix).toBe(res.body.key.slice(4, 12));
    expect(Date.parse(res.body.created_at)).toBe(t.clock.now());

    const stored = await t.storage.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(res.body.key.slice(4));
    expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);

    for (const url of [res.headers.location as string, keysUrl(u.id)]) {
      const read = await t.request({ url, token: u.token });
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(res.body.key);
      expect(read.text).not.toContain('"key"');
    }
    const one = await t.request({ url: res.headers.location as string, token: u.token });
    const { key: _key, ...record } = res.body;
    expect(one.body).toEqual(record);
  });

  it('when keys are generated, then each is new and every character position is drawn from all of 0-9a-zA-Z', async () => {
    const u = await createUser(t);
    const keys = new Set<string>();
    for (let i = 0; i < 30; i += 1) keys.add((await createApiKey(t, u, ['users:read'])).key);
    expect(keys.size).toBe(30);
    const chars = new Set([...keys].flatMap((k) => [...k.slice(4)]));
    expect(chars.size).toBeGreaterThan(55); // 1,200 draws from 62 characters
  });

  it('when the body is invalid, then 400 naming every offending field and nothing is created', async () => {
    const u = await createUser(t);
    const bad = [
      [{ name: '', scopes: [] }, ['name', 'scopes']],
      [{ name: 'x'.repeat(65), scopes: ['links:read'] }, ['name']],
      [{ name: 'ok', scopes: ['links:delete'] }, ['scopes.0']],
      [{ name: 'ok', scopes: ['links:read', 'links:read'] }, ['scopes']],
      [{ name: 'ok' }, ['scopes']],
      [{ name: 'ok', scopes: ['links:read'], key: 'fry_mine' }, ['key']],
      [
        { name: 'ok', scopes: ['links:read'], expires_at: new Date(t.clock.now() - 1000).toISOString() },
        ['expires_at'],
      ],
      [{ name: 'ok', scopes: ['links:read'], expires_at: 'tomorrow' }, ['expires_at']],
    ] as const;
    for (const [payload, fields] of bad) {
      const res = await t.request({ method: 'POST', url: keysUrl(u.id), token: u.token, payload });
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field).sort(), JSON.stringify(payload)).toEqual(
        [...fields].sort(),
      );
    }
    expect((await t.request({ url: keysUrl(u.id), token: u.token })).body.data).toEqual([]);
  });

  it("when another user creates, lists, reads or revokes someone's keys, then 403; an admin may; an unknown user is 404 to an admin", async () => {
    const a = await createUser(t);
    const b = await createUser(t);
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const { id } = await createApiKey(t, a, ['links:read']);
    const attempts = [
      { method: 'POST' as const, url: keysUrl(a.id), payload: { name: 'x', scopes: ['links:read'] } },
      { method: 'GET' as const, url: keysUrl(a.id) },
      { method: 'GET' as const, url: `${keysUrl(a.id)}/${id}` },
      { method: 'DELETE' as const, url: `${keysUrl(a.id)}/${id}` },
    ];
    for (const attempt of attempts) {
      const res = await t.request({ ...attempt, token: b.token });
      expect(res.status, `${attempt.method} ${attempt.url}`).toBe(403);
      expect((await t.request(attempt)).status).toBe(401);
    }
    const byAdmin = await t.request({
      method: 'POST',
      url: keysUrl(a.id),
      token: admin.token,
      payload: { name: 'for a', scopes: ['orders:read'] },
    });
    expect(byAdmin.status).toBe(201);
    expect((await t.request({ url: keysUrl(a.id), token: admin.token })).body.data).toHaveLength(2);
    expect((await t.request({ url: `${keysUrl(b.id)}/${id}`, token: admin.token })).status).toBe(404); // not b's key
    expect(
      (
        await t.request({
          method: 'POST',
          url: keysUrl(987654321),
          token: admin.token,
          payload: { name: 'x', scopes: ['links:read'] },
        })
      ).status,
    ).toBe(404);
    expect((await t.request({ url: keysUrl(987654321), token: admin.token })).status).toBe(404);
  });

  it('when a key is revoked, then 204, it is gone from the list, a second revoke is 404, and the key is refused', async () => {
    const u = await createUser(t);
    const { id, key } = await createApiKey(t, u, ['users:read']);
    expect((await t.request({ url: '/api/v1/users/me', token: key })).status).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `${keysUrl(u.id)}/${id}`, token: u.token })).status).toBe(204);
    const refused = await t.request({ url: '/api/v1/users/me', token: key });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer realm="ferry", error="invalid_token"/);
    expect((await t.request({ method: 'DELETE', url: `${keysUrl(u.id)}/${id}`, token: u.token })).status).toBe(404);
    expect((await t.request({ url: `${keysUrl(u.id)}/${id}`, token: u.token })).status).toBe(404);
    expect((await t.request({ url: keysUrl(u.id), token: u.token })).body.data).toEqual([]);
  });

  it('when keys are listed, then pages on v1 (page and cursor) and cursor pages in camelCase on v2', async () => {
    const u = await createUser(t);
    const ids: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push((await createApiKey(t, u, ['links:read'], { name: `key ${i}` })).id);
      t.clock.advance(1);
    }
    const page = await t.request({ url: `${keysUrl(u.id)}?limit=2&page=2`, token: u.token });
    expect(page.status).toBe(200);
    expect(page.body.data.map((k: { id: number }) => k.id)).toEqual(ids.slice(2, 4));
    expect(page.body.pagination).toMatchObject({ page: 2, limit: 2, total: 5, totalPages: 3 });
    expect(page.headers.link).toContain('rel="next"');

    const seen: number[] = [];
    let url: string | null = `${keysUrl(u.id, 2)}?limit=2&sort=createdAt&order=desc`;
    while (url) {
      const res = await t.request({ url, token: u.token });
      expect(res.status).toBe(200);
      expect(res.body.pagination).not.toHaveProperty('total');
      expect(res.body.data[0]).toHaveProperty('createdAt');
      expect(res.body.data[0]).toHaveProperty('lastUsedAt');
      expect(res.body.data[0]).not.toHaveProperty('created_at');
      seen.push(...res.body.data.map((k: { id: number }) => k.id));
      url = res.body.pagination.nextCursor
        ? `${keysUrl(u.id, 2)}?limit=2&sort=createdAt&order=desc&cursor=${res.body.pagination.nextCursor}`
        : null;
    }
    expect(seen).toEqual([...ids].reverse());
    expect((await t.request({ url: `${keysUrl(u.id, 2)}?page=1`, token: u.token })).status).toBe(400);
  });

  it('when v2 creates a key, then the body and the answer are camelCase', async () => {
    const u = await createUser(t);
    const expiresAt = new Date(t.clock.now() + 86_400_000).toISOString();
    const res = await t.request({
      method: 'POST',
      url: keysUrl(u.id, 2),
      token: u.token,
      payload: { name: 'v2', scopes: ['stats:read'], expiresAt },
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/api/v2/users/${u.id}/api-keys/${res.body.id}`);
    expect(res.body).toMatchObject({ name: 'v2', scopes: ['stats:read'], expiresAt, lastUsedAt: null });
    expect(res.body.key).toMatch(/^fry_/);
    expect(
      (
        await t.request({
          method: 'POST',
          url: keysUrl(u.id, 2),
          token: u.token,
          payload: { name: 'v2', scopes: ['stats:read'], expires_at: expiresAt },
        })
      ).status,
    ).toBe(400);
  });

  it('when the path says me, then it is the caller: create, list, read and revoke their own keys; anonymous is 401', async () => {
    const u = await createUser(t);
    const created = await t.request({
      method: 'POST',
      url: keysUrl('me'),
      token: u.token,
      payload: { name: 'mine', scopes: ['users:read'] },
    });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`/api/v1/users/${u.id}/api-keys/${created.body.id}`);
    const listed = await t.request({ url: keysUrl('me', 2), token: created.body.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { id: number }) => k.id)).toEqual([created.body.id]);
    expect((await t.request({ url: `${keysUrl('me')}/${created.body.id}`, token: u.token })).body.name).toBe('mine');
    expect((await t.request({ url: keysUrl('me') })).status).toBe(401);
    expect(
      (await t.request({ method: 'DELETE', url: `${keysUrl('me')}/${created.body.id}`, token: u.token })).status,
    ).toBe(204);
    expect((await t.request({ url: keysUrl('me'), token: u.token })).body.data).toEqual([]);
  });

  it('when a user holds the maximum number of keys, then another is 409, also when creations race', async () => {
    const u = await createUser(t);
    await t.storage.db
      .insertInto('api_keys')
      .values(
        Array.from({ length: 98 }, (_, i) => ({
          user_id: u.id,
          name: `k${i}`,
          prefix: 'aaaaaaaa',
          key_hash: `${u.id}-${String(i).padStart(3, '0')}-`.padEnd(64, 'x'),
          scopes: 'links:read',
          created_at: t.clock.now(),
          expires_at: null,
        })),
      )
      .execute();
    const racing = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.request({
          method: 'POST',
          url: keysUrl(u.id),
          token: u.token,
          payload: { name: 'last', scopes: ['links:read'] },
        }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 201, 409, 409, 409, 409]);
    expect(racing.find((r) => r.status === 409)!.body.error.code).toBe('CONFLICT');
    const { n } = await t.storage.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', u.id)
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(100);
  });
});
