import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { ISO_UTC } from '../helpers/db-state.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { createUser } from '../helpers/factories.js';

/** SPEC §1/§3: ETag on GETs, If-None-Match 304, If-Match 412, Cache-Control fitting the data. */
describe.each(engines)('conditional requests on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a per-user record is read, then ETag and Cache-Control private, ISO timestamps and a safe integer id', async () => {
    const u = await createUser(t);
    for (const url of [`/api/v1/users/${u.id}`, '/api/v1/users/me']) {
      const res = await t.request({ url, token: u.token });
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe(`"user-${u.id}-v1"`);
      expect(res.headers['cache-control']).toBe('private, no-cache');
      expect(res.body.createdAt).toMatch(ISO_UTC);
      expect(res.body.updatedAt).toMatch(ISO_UTC);
      expect(Number.isSafeInteger(res.body.id)).toBe(true);
      expect(res.body.id).toBeGreaterThan(0);
    }
  });

  it('when If-None-Match matches (exact, in a list, weak form, *), then 304 repeating ETag and Cache-Control with no body', async () => {
    const u = await createUser(t);
    const etag = `"user-${u.id}-v1"`;
    for (const inm of [etag, `"other", ${etag}`, `W/${etag}`, `"a" ,W/${etag} , "b"`, '*']) {
      const res = await t.request({ url: `/api/v1/users/${u.id}`, token: u.token, headers: { 'if-none-match': inm } });
      expect(res.status, inm).toBe(304);
      expect(res.text).toBe('');
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['cache-control']).toBe('private, no-cache');
    }
  });

  it('when If-None-Match does not match, then 200 with the body', async () => {
    const u = await createUser(t);
    for (const inm of [`"user-${u.id}-v2"`, `"user-${u.id}-v1`, 'garbage']) {
      const res = await t.request({ url: `/api/v1/users/${u.id}`, token: u.token, headers: { 'if-none-match': inm } });
      expect(res.status, inm).toBe(200);
      expect(res.body.id).toBe(u.id);
    }
  });

  it('when the record changes, then the old ETag no longer gives 304', async () => {
    const u = await createUser(t);
    const first = await t.request({ url: '/api/v1/users/me', token: u.token });
    await t.request({
      method: 'PATCH',
      url: '/api/v1/users/me'.replace('me', String(u.id)),
      token: u.token,
      payload: { name: 'Changed' },
    });
    const res = await t.request({
      url: '/api/v1/users/me',
      token: u.token,
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(`"user-${u.id}-v2"`);
  });

  it('when a collection is read, then it has an ETag that If-None-Match turns into 304, and is private', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const first = await t.request({ url: '/api/v1/users?sort=id&limit=5', token: admin.token });
    expect(first.status).toBe(200);
    expect(first.headers.etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    const again = await t.request({
      url: '/api/v1/users?sort=id&limit=5',
      token: admin.token,
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    expect(again.status).toBe(304);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['cache-control']).toBe('private, no-cache');
    expect(again.headers.link).toBe(first.headers.link);
  });

  it('when If-Match is stale on PUT, PATCH or DELETE, then 412 PRECONDITION_FAILED and nothing changes', async () => {
    const u = await createUser(t);
    const stale = `"user-${u.id}-v1"`;
    await t.request({ method: 'PATCH', url: `/api/v1/users/${u.id}`, token: u.token, payload: { name: 'v2' } });
    const attempts = [
      { method: 'PUT' as const, payload: { username: u.username, email: u.email, name: 'lost' } },
      { method: 'PATCH' as const, payload: { name: 'lost' } },
      { method: 'DELETE' as const, payload: undefined },
    ];
    for (const ifMatch of [stale, `W/"user-${u.id}-v2"`, '"something-else"']) {
      for (const a of attempts) {
        const res = await t.request({
          method: a.method,
          url: `/api/v1/users/${u.id}`,
          token: u.token,
          payload: a.payload,
          headers: { 'if-match': ifMatch },
        });
        expect(expectEnvelope(res, 412, 'PRECONDITION_FAILED'), `${a.method} ${ifMatch}`).toEqual(['If-Match']);
      }
    }
    const now = await t.request({ url: `/api/v1/users/${u.id}`, token: u.token });
    expect(now.body).toMatchObject({ name: 'v2', version: 2 });
  });

  it('when If-Match is current (or *), then PUT, PATCH and DELETE go ahead', async () => {
    const u = await createUser(t);
    const put = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { username: u.username, email: u.email, name: 'P' },
      headers: { 'if-match': `"user-${u.id}-v1"` },
    });
    expect(put.status).toBe(200);
    expect(put.headers.etag).toBe(`"user-${u.id}-v2"`);
    const patch = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { age: 5 },
      headers: { 'if-match': `"x", ${put.headers.etag}` },
    });
    expect(patch.status).toBe(200);
    expect(patch.body.version).toBe(3);
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      headers: { 'if-match': '*' },
    });
    expect(del.status).toBe(204);
  });

  it('when a write succeeds, then its response is not cacheable and a 201 carries the new ETag', async () => {
    const u = await createUser(t);
    const patch = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: { name: 'n' },
    });
    expect(patch.headers['cache-control']).toBe('no-store');
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { username: `${u.username.slice(0, 28)}_b`, email: `b.${u.email}`, password: 'long-enough-pw' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.etag).toBe(`"user-${res.body.id}-v1"`);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('when the API documentation is read, then it is public and cacheable', async () => {
    const res = await t.request({ url: '/v3/api-docs' });
    expect(res.headers['cache-control']).toBe('public, max-age=60');
  });
});
