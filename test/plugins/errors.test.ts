import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { logCapture, usersFingerprint } from '../helpers/db-state.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { createUser, uniqueName } from '../helpers/factories.js';

/** SPEC §2: every error kind leaves as the one envelope. */
describe.each(engines)('error envelope on %s', (engine) => {
  const t = useTestApp(engine, { env: { BODY_LIMIT_BYTES: '1024' } });

  const newUser = () => {
    const username = uniqueName();
    return { username, email: `${username}@example.com`, password: 'long-enough-pw' };
  };

  it('when several body fields are invalid, then 400 VALIDATION_ERROR with one detail per field, named as sent', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { username: 'x', email: 'nope', password: 1, age: -1, role: 'root' },
    });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['age', 'email', 'password', 'role', 'username']);
    expect(res.body.error.message).toBe('Request body is invalid');
    expect(res.body.error.details).toContainEqual({ field: 'email', message: 'must be a valid e-mail address' });
  });

  it('when required fields are missing, then each missing field has its own detail', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: {} });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['email', 'password', 'username']);
  });

  it('when the body has fields the resource does not have, then 400 naming each of them', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { ...newUser(), nickname: 'n', isAdmin: true },
    });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['isAdmin', 'nickname']);
    expect(res.body.error.details[0].message).toBe('is not a field of this resource');
  });

  it('when query parameters are invalid, then the details name the query parameters', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const res = await t.request({ url: '/api/v1/users?limit=abc&role=root&order=up', token: admin.token });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['limit', 'order', 'role']);
    expect(res.body.error.message).toBe('Query parameters are invalid');
  });

  it('when a path parameter is not an id, then 400 naming it (for an admin, who may reach any id)', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    for (const bad of ['abc', '0', '9007199254740992', '1.5']) {
      const res = await t.request({ url: `/api/v1/users/${bad}`, token: admin.token });
      expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['id']);
    }
  });

  it('when the JSON is malformed or empty, then 400 MALFORMED_JSON and nothing is written', async () => {
    const before = await usersFingerprint(t);
    for (const payload of ['{"username": "abc",', '', '{"a":1}}', "{'a':1}", '{"__proto__": {"x": 1}}']) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/users',
        payload,
        headers: { 'content-type': 'application/json' },
      });
      expect(expectEnvelope(res, 400, 'MALFORMED_JSON')).toEqual([]);
    }
    expect(await usersFingerprint(t)).toBe(before);
  });

  it('when the path is unknown, then 404 NOT_FOUND in the envelope, inside and outside the API prefix', async () => {
    for (const url of ['/api/v1/nothing-here', '/api/v1/users/1/unknown', '/nope', '/api/v1']) {
      const res = await t.request({ url });
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
    expectEnvelope(await t.request({ method: 'POST', url: '/api/v1/nothing', payload: {} }), 404, 'NOT_FOUND');
  });

  it('when a known path gets a method it does not have, then 405 with Allow listing the methods it has', async () => {
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/api/v1/users', 'GET, HEAD, POST, OPTIONS'],
      ['POST', '/api/v1/users/1', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'],
      ['GET', '/api/v1/tokens', 'POST, OPTIONS'],
      ['PUT', '/api/v1/tokens/current', 'DELETE, OPTIONS'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await t.request({ method: method as 'GET', url });
      expectEnvelope(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe(allow);
    }
  });

  it('when the body is over BODY_LIMIT_BYTES, then 413 PAYLOAD_TOO_LARGE and nothing is written', async () => {
    const before = await usersFingerprint(t);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { ...newUser(), name: 'x'.repeat(1100) },
    });
    expectEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(await usersFingerprint(t)).toBe(before);
    // just under the limit is parsed (and then validated)
    const under = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { ...newUser(), name: 'x'.repeat(900) },
    });
    expect(under.status).toBe(400);
    expect(under.body.error.details).toEqual([{ field: 'name', message: expect.any(String) }]);
  });

  it('when the body is not JSON, then 415 UNSUPPORTED_MEDIA_TYPE (POST, PUT) and, on PATCH, Accept-Patch', async () => {
    const u = await createUser(t);
    const post = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: 'username=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectEnvelope(post, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(post.headers['accept-patch']).toBeUndefined();
    const put = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expectEnvelope(put, 415, 'UNSUPPORTED_MEDIA_TYPE');
    for (const type of ['text/plain', 'application/json-patch+json', 'application/xml']) {
      const patch = await t.request({
        method: 'PATCH',
        url: `/api/v1/users/${u.id}`,
        token: u.token,
        payload: '[]',
        headers: { 'content-type': type },
      });
      expectEnvelope(patch, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(patch.headers['accept-patch']).toBe('application/json, application/merge-patch+json');
    }
  });

  it('when application/merge-patch+json is sent to POST or PUT, then 415 and nothing is written', async () => {
    const u = await createUser(t);
    const before = await usersFingerprint(t);
    const headers = { 'content-type': 'application/merge-patch+json' };
    expectEnvelope(
      await t.request({ method: 'POST', url: '/api/v1/users', payload: JSON.stringify(newUser()), headers }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const put = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      payload: JSON.stringify({ username: u.username, email: u.email }),
      headers,
    });
    expectEnvelope(put, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(await usersFingerprint(t)).toBe(before);
  });

  it('when JSON is sent with a charset parameter, then it is accepted', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: JSON.stringify(newUser()),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });
});

describe.each(engines)('unexpected failures on %s', (engine) => {
  it('when the database fails mid-request, then 500 INTERNAL_ERROR with a masked message, and the log has the error under the same requestId', async () => {
    const log = logCapture();
    const t = await createTestApp(engine, { logStream: log.stream });
    try {
      const u = await createUser(t);
      // A missing table: the driver's message names SQL objects, which must stay in the log.
      await sql`alter table users rename to users_gone`.execute(t.storage.db);
      const res = await t.request({
        url: '/api/v1/users/me',
        token: u.token,
        headers: { 'x-request-id': 'trace-500-a' },
      });
      expectEnvelope(res, 500, 'INTERNAL_ERROR');
      expect(res.body.error).toEqual({ code: 'INTERNAL_ERROR', message: 'Internal server error', details: [] });
      expect(res.body.requestId).toBe('trace-500-a');
      expect(res.text).not.toMatch(/users|select|relation|stack|\.ts:\d+|at /i);
      const logged = log.lines.find((l) => l.requestId === 'trace-500-a' && l.level === 50);
      expect(logged, JSON.stringify(log.lines.filter((l) => l.requestId === 'trace-500-a'))).toBeDefined();
      const err = logged!.err as { message: string; stack: string };
      expect(err.message).toMatch(/users/);
      expect(err.stack).toMatch(/\n\s+at /);
    } finally {
      await t.close();
    }
  });

  it('when the storage is closed before a request, then 500 masked, logged with the requestId', async () => {
    const log = logCapture();
    const t = await createTestApp(engine, { logStream: log.stream });
    const { username } = { username: uniqueName() };
    await t.storage.close();
    try {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/users',
        payload: { username, email: `${username}@example.com`, password: 'long-enough-pw' },
      });
      expectEnvelope(res, 500, 'INTERNAL_ERROR');
      expect(res.body.error.message).toBe('Internal server error');
      expect(res.text).not.toMatch(/stack|insert|destroy|pool|connection|at /i);
      const logged = log.lines.find((l) => l.requestId === res.body.requestId && l.level === 50);
      expect(logged).toBeDefined();
      expect((logged!.err as { stack: string }).stack).toMatch(/\n\s+at /);
    } finally {
      await t.close(); // closing the storage a second time is harmless on both engines
    }
  });
});
