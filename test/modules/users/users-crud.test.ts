import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { createUser, uniqueName } from '../../helpers/factories.js';

describe.each(engines)('users CRUD on %s', (engine) => {
  const t = useTestApp(engine);

  const signUp = (over: Record<string, unknown> = {}) => {
    const username = uniqueName();
    return t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { username, email: `${username}@example.com`, password: 'long-enough-pw', ...over },
    });
  };

  it('when a user signs up, then 201 with Location, the record, pending status and no password', async () => {
    const res = await signUp({ name: 'Ada', age: 36 });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/api/v1/users/${res.body.id}`);
    expect(res.body).toMatchObject({ role: 'user', status: 'pending', name: 'Ada', age: 36, version: 1 });
    expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.text).not.toMatch(/password/i);
    expect(Number.isSafeInteger(res.body.id)).toBe(true);
  });

  it('when the password is stored, then only as a salted scrypt hash', async () => {
    const res = await signUp({ password: 'plain-text-secret' });
    const row = await t.storage.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[\w-]+\$[\w-]+$/);
    expect(row.password_hash).not.toContain('plain-text-secret');
  });

  it('when username or email differ only in case from existing ones, then 409 CONFLICT naming both fields', async () => {
    const first = await signUp();
    const res = await signUp({ username: first.body.username.toUpperCase(), email: first.body.email.toUpperCase() });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'username']);
  });

  it('when several fields are invalid, then one detail per field and nothing is written', async () => {
    const before = await t.storage.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { username: 'a', email: 'not-an-email', password: 'short', age: 200, extra: true },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'age',
      'email',
      'extra',
      'password',
      'username',
    ]);
    const after = await t.storage.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('when a body field has the wrong JSON type, then 400 (no coercion of "36" into 36)', async () => {
    const res = await signUp({ age: '36' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'age', message: expect.any(String) }]);
  });

  it('when a client echoes read-only fields from a GET, then they are accepted and ignored', async () => {
    const u = await createUser(t);
    const got = await t.request({ url: `/api/v1/users/${u.id}`, token: u.token });
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { id: 999999, createdAt: '1999-01-01T00:00:00.000Z', updatedAt: 'x', name: 'New' },
    });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(u.id);
    expect(res.body.createdAt).toBe(got.body.createdAt);
    expect(res.body.name).toBe('New');
  });

  it('when PUT omits name and age, then they become null while role and status stay', async () => {
    const u = await createUser(t, { status: 'active' });
    await t.request({ method: 'PATCH', url: `/api/v1/users/${u.id}`, token: u.token, payload: { name: 'N', age: 30 } });
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { username: u.username, email: u.email },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: null, age: null, status: 'active', role: 'user' });
  });

  it('when PATCH is a merge patch, then only sent fields change and null clears', async () => {
    const u = await createUser(t);
    await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { name: 'Keep', age: 20 },
    });
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ age: null }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Keep', age: null, version: 3 });
  });

  it('when a body version is stale, then 409 VERSION_CONFLICT; when If-Match is stale, then 412; nothing changes', async () => {
    const u = await createUser(t);
    const v1 = await t.request({ url: `/api/v1/users/${u.id}`, token: u.token });
    await t.request({ method: 'PATCH', url: `/api/v1/users/${u.id}`, token: u.token, payload: { name: 'changed' } });
    const stale = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { name: 'lost', version: 1 },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('VERSION_CONFLICT');
    const pre = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      headers: { 'if-match': String(v1.headers.etag) },
      payload: { name: 'lost' },
    });
    expect(pre.status).toBe(412);
    expect(pre.body.error.code).toBe('PRECONDITION_FAILED');
    const now = await t.request({ url: `/api/v1/users/${u.id}`, token: u.token });
    expect(now.body.name).toBe('changed');
    const ok = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      headers: { 'if-match': String(now.headers.etag) },
      payload: { name: 'fine', version: now.body.version },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.etag).not.toBe(now.headers.etag);
  });

  it('when a user is deleted, then 204, again 404, and their token stops working', async () => {
    const u = await createUser(t);
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${u.id}`, token: u.token })).status).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${u.id}`, token: admin.token })).status).toBe(404);
    const me = await t.request({ url: '/api/v1/users/me', token: u.token });
    expect(me.status).toBe(401);
    expect(me.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
  });
});
