import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { logCapture } from '../helpers/db-state.js';
import { createUser } from '../helpers/factories.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** SPEC §1: every response carries X-Request-Id; the same id is in error bodies and in the log. */
describe.each(engines)('request ids on %s', (engine) => {
  const log = logCapture();
  const t = useTestApp(engine, { logStream: log.stream });

  it('when the client sends no id, then each response gets a fresh UUID', async () => {
    const a = await t.request({ url: '/api/v1/nothing' });
    const b = await t.request({ url: '/api/v1/nothing' });
    expect(a.headers['x-request-id']).toMatch(UUID);
    expect(b.headers['x-request-id']).toMatch(UUID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    expect(a.body.requestId).toBe(a.headers['x-request-id']);
  });

  it('when the client sends a sane id, then it is echoed on success and on errors, and the log lines carry it', async () => {
    const u = await createUser(t);
    const id = 'Client.req-42_x:y@z+=';
    const ok = await t.request({ url: '/api/v1/users/me', token: u.token, headers: { 'x-request-id': id } });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-request-id']).toBe(id);
    const bad = await t.request({ url: '/api/v1/users/me', headers: { 'x-request-id': `${id}2` } });
    expect(bad.status).toBe(401);
    expect(bad.headers['x-request-id']).toBe(`${id}2`);
    expect(bad.body.requestId).toBe(`${id}2`);
    const lines = log.lines.filter((l) => l.requestId === id);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  });

  it('when the id is exactly 128 safe characters, then it is kept', async () => {
    const id = 'a'.repeat(128);
    const res = await t.request({ url: '/nope', headers: { 'x-request-id': id } });
    expect(res.headers['x-request-id']).toBe(id);
    expect(res.body.requestId).toBe(id);
  });

  it('when the id is too long, empty or has unsafe characters, then a new UUID replaces it', async () => {
    for (const sent of ['a'.repeat(129), '', 'has space', '<script>', 'quote"d', 'semi;colon', 'ünïcode', 'a,b']) {
      const res = await t.request({ url: '/nope', headers: { 'x-request-id': sent } });
      expect(res.headers['x-request-id'], sent).toMatch(UUID);
      expect(res.body.requestId).toBe(res.headers['x-request-id']);
    }
  });

  it('when the response is not an error (201, 204, OPTIONS, HEAD, 304, docs), then it still carries the id', async () => {
    const u = await createUser(t);
    const got = await t.request({ url: '/api/v1/users/me', token: u.token });
    // One after the other: the last one revokes the token the others use.
    const responses = [
      await t.request({ method: 'OPTIONS', url: '/api/v1/users' }),
      await t.request({ method: 'HEAD', url: '/api/v1/users/me', token: u.token }),
      await t.request({
        url: '/api/v1/users/me',
        token: u.token,
        headers: { 'if-none-match': String(got.headers.etag) },
      }),
      await t.request({ url: '/v3/api-docs' }),
      await t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token: u.token }),
    ];
    expect(responses.map((r) => r.status)).toEqual([204, 200, 304, 200, 204]);
    for (const r of responses) expect(r.headers['x-request-id']).toMatch(UUID);
  });
});
