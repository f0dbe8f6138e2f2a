import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { usersFingerprint } from '../../helpers/db-state.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, login } from '../../helpers/factories.js';

/** SPEC §3's authorization rules and SPEC §4's 401-versus-403 on the users routes. */
describe.each(engines)('who may do what with users on %s', (engine) => {
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });

  const MISSING = 987_654_321;
  const record = (id: number) =>
    t.storage.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const fresh = (suffix: string) => {
    const username = `${suffix}_${Math.random().toString(36).slice(2, 10)}`;
    return { username, email: `${username}@example.com`, password: 'long-enough-pw' };
  };

  it('when the collection is listed, then anonymous 401, a user 403, an admin 200', async () => {
    const u = await createUser(t);
    const anon = await t.request({ url: '/api/v1/users' });
    expectEnvelope(anon, 401, 'UNAUTHENTICATED');
    expect(anon.headers['www-authenticate']).toBe('Bearer realm="ferry"');
    expectEnvelope(await t.request({ url: '/api/v1/users', token: u.token }), 403, 'FORBIDDEN');
    expect((await t.request({ url: '/api/v1/users', token: admin.token })).status).toBe(200);
  });

  it("when user A reaches user B's record with any method, then 403 and B is unchanged", async () => {
    const a = await createUser(t);
    const b = await createUser(t);
    const before = await record(b.id);
    const url = `/api/v1/users/${b.id}`;
    expectEnvelope(await t.request({ url, token: a.token }), 403, 'FORBIDDEN');
    const head = await t.request({ method: 'HEAD', url, token: a.token });
    expect([head.status, head.text]).toEqual([403, '']);
    expectEnvelope(
      await t.request({
        method: 'PUT',
        url,
        token: a.token,
        payload: { username: b.username, email: b.email, name: 'pwned' },
      }),
      403,
      'FORBIDDEN',
    );
    expectEnvelope(
      await t.request({ method: 'PATCH', url, token: a.token, payload: { name: 'pwned' } }),
      403,
      'FORBIDDEN',
    );
    expectEnvelope(await t.request({ method: 'DELETE', url, token: a.token }), 403, 'FORBIDDEN');
    expect(await record(b.id)).toEqual(before);
  });

  it('when a user reaches an id that does not exist, then 403 as for any other id (no existence oracle); an admin gets 404', async () => {
    const u = await createUser(t);
    const url = `/api/v1/users/${MISSING}`;
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const payload = method === 'PUT' ? fresh('ghost') : method === 'PATCH' ? { name: 'x' } : undefined;
      expectEnvelope(await t.request({ method, url, token: u.token, payload }), 403, 'FORBIDDEN');
      expectEnvelope(await t.request({ method, url, token: admin.token, payload }), 404, 'NOT_FOUND');
    }
    expectEnvelope(await t.request({ url }), 401, 'UNAUTHENTICATED');
  });

  it('when a user raises their own role or activates themselves, then 403 naming the field and nothing changes', async () => {
    const u = await createUser(t, { status: 'pending' });
    const url = `/api/v1/users/${u.id}`;
    const before = await record(u.id);
    expect(
      expectEnvelope(
        await t.request({ method: 'PATCH', url, token: u.token, payload: { role: 'admin' } }),
        403,
        'FORBIDDEN',
      ),
    ).toEqual(['role']);
    expect(
      expectEnvelope(
        await t.request({ method: 'PATCH', url, token: u.token, payload: { status: 'active' } }),
        403,
        'FORBIDDEN',
      ),
    ).toEqual(['status']);
    expect(
      expectEnvelope(
        await t.request({
          method: 'PATCH',
          url,
          token: u.token,
          payload: { role: 'admin', status: 'active', name: 'sneaky' },
        }),
        403,
        'FORBIDDEN',
      ),
    ).toEqual(['role', 'status']);
    const put = await t.request({
      method: 'PUT',
      url,
      token: u.token,
      payload: { username: u.username, email: u.email, role: 'admin' },
    });
    expect(expectEnvelope(put, 403, 'FORBIDDEN')).toEqual(['role']);
    expect(await record(u.id)).toEqual(before);
    expectEnvelope(await t.request({ url: '/api/v1/users', token: u.token }), 403, 'FORBIDDEN');
  });

  it('when a user echoes their current role and status, then the write goes through', async () => {
    const u = await createUser(t, { status: 'pending' });
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { role: 'user', status: 'pending', name: 'Same' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ role: 'user', status: 'pending', name: 'Same' });
  });

  it("when an admin changes a user's role and status, then 200, the user's earlier token is revoked (SPEC §12) and a new one carries the new rights", async () => {
    const u = await createUser(t);
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: admin.token,
      payload: { role: 'admin', status: 'active' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: u.id, role: 'admin', status: 'active', version: 2 });
    expect((await t.request({ url: '/api/v1/users', token: u.token })).status).toBe(401);
    expect((await t.request({ url: '/api/v1/users', token: await login(t, u.username, u.password) })).status).toBe(200);
    const put = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${u.id}`,
      token: admin.token,
      payload: { username: u.username, email: u.email, role: 'user', status: 'suspended' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ role: 'user', status: 'suspended' });
  });

  it('when an admin is created without an admin token, then 403 and nothing is written; with one, 201', async () => {
    const u = await createUser(t);
    const before = await usersFingerprint(t);
    expect(
      expectEnvelope(
        await t.request({ method: 'POST', url: '/api/v1/users', payload: { ...fresh('a1'), role: 'admin' } }),
        403,
        'FORBIDDEN',
      ),
    ).toEqual(['role']);
    expect(
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: '/api/v1/users',
          token: u.token,
          payload: { ...fresh('a2'), role: 'admin' },
        }),
        403,
        'FORBIDDEN',
      ),
    ).toEqual(['role']);
    expect(
      expectEnvelope(
        await t.request({ method: 'POST', url: '/api/v1/users', payload: { ...fresh('a3'), status: 'active' } }),
        403,
        'FORBIDDEN',
      ),
    ).toEqual(['status']);
    expect(await usersFingerprint(t)).toBe(before);
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      token: admin.token,
      payload: { ...fresh('a4'), role: 'admin', status: 'active' },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ role: 'admin', status: 'active' });
    const plain = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { ...fresh('a5'), role: 'user', status: 'pending' },
    });
    expect(plain.status).toBe(201);
  });

  it("when /users/me is read, then the caller's own record (user and admin); without a token 401", async () => {
    const u = await createUser(t);
    const mine = await t.request({ url: '/api/v1/users/me', token: u.token });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ id: u.id, username: u.username, email: u.email, role: 'user' });
    expect(mine.body).toEqual((await t.request({ url: `/api/v1/users/${u.id}`, token: u.token })).body);
    expect((await t.request({ url: '/api/v1/users/me', token: admin.token })).body.id).toBe(admin.id);
    expectEnvelope(await t.request({ url: '/api/v1/users/me' }), 401, 'UNAUTHENTICATED');
  });

  it('when a user reads, replaces and deletes their own record, then it works; an admin may do the same to anyone', async () => {
    const u = await createUser(t);
    const v = await createUser(t);
    expect((await t.request({ url: `/api/v1/users/${u.id}`, token: u.token })).status).toBe(200);
    expect(
      (
        await t.request({
          method: 'PUT',
          url: `/api/v1/users/${u.id}`,
          token: u.token,
          payload: { username: u.username, email: u.email, age: 40 },
        })
      ).body.age,
    ).toBe(40);
    expect((await t.request({ url: `/api/v1/users/${v.id}`, token: admin.token })).status).toBe(200);
    expect(
      (
        await t.request({
          method: 'PATCH',
          url: `/api/v1/users/${v.id}`,
          token: admin.token,
          payload: { name: 'By admin' },
        })
      ).body.name,
    ).toBe('By admin');
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${v.id}`, token: admin.token })).status).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${u.id}`, token: u.token })).status).toBe(204);
  });

  it('when a bad token is sent to an open route, then 401 rather than anonymous access', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/users', token: 'not.a.token', payload: fresh('bt') });
    expectEnvelope(res, 401, 'UNAUTHENTICATED');
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });
});
