import { describe, expect, it } from 'vitest';
import { engines, type ApiResponse } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { createUser } from '../helpers/factories.js';

/** Headers that legitimately differ between two responses to the same request (RateLimit counts them down). */
const PER_RESPONSE = new Set(['date', 'x-request-id', 'connection', 'ratelimit']);
const stable = (res: ApiResponse) =>
  Object.fromEntries(Object.entries(res.headers).filter(([k]) => !PER_RESPONSE.has(k)));

/** SPEC §1: HEAD works wherever GET does; OPTIONS answers with Allow; unknown paths 404. */
describe.each(engines)('HEAD and OPTIONS on %s', (engine) => {
  const t = useTestApp(engine);

  it('when HEAD is sent for a record, then the same status and headers as GET and no body', async () => {
    const u = await createUser(t);
    const get = await t.request({ url: `/api/v1/users/${u.id}`, token: u.token });
    const head = await t.request({ method: 'HEAD', url: `/api/v1/users/${u.id}`, token: u.token });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(stable(head)).toEqual(stable(get));
    expect(head.headers.etag).toBe(`"user-${u.id}-v1"`);
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(get.text));
  });

  it('when HEAD is sent for a collection, then the same ETag, Link and Cache-Control as GET and no body', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const get = await t.request({ url: '/api/v1/users?limit=1', token: admin.token });
    const head = await t.request({ method: 'HEAD', url: '/api/v1/users?limit=1', token: admin.token });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(stable(head)).toEqual(stable(get));
    expect(head.headers.link).toContain('rel="first"');
  });

  it('when HEAD fails (no token), then the error status and headers without a body', async () => {
    const res = await t.request({ method: 'HEAD', url: '/api/v1/users/me' });
    expect(res.status).toBe(401);
    expect(res.text).toBe('');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('when OPTIONS is sent for a known path, then 204 with Allow naming exactly its methods', async () => {
    const cases: Array<[string, string]> = [
      ['/api/v1/users', 'GET, HEAD, POST, OPTIONS'],
      ['/api/v1/users/42', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'],
      ['/api/v1/tokens', 'POST, OPTIONS'],
      ['/api/v1/tokens/current', 'DELETE, OPTIONS'],
      ['/api/v1/tokens/abc', 'DELETE, OPTIONS'],
      ['/v3/api-docs', 'GET, HEAD, OPTIONS'],
    ];
    for (const [url, allow] of cases) {
      const res = await t.request({ method: 'OPTIONS', url });
      expect(res.status, url).toBe(204);
      expect(res.headers.allow, url).toBe(allow);
      expect(res.text).toBe('');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('when OPTIONS is sent for an unknown path, then 404 in the envelope', async () => {
    // (`/nope` or `/no-such-path` would be a short code or an alias: GET /{code} exists, so OPTIONS answers for it)
    for (const url of ['/api/v1/nothing', '/api/v1/users/1/nothing', '/no.such.path', '/a/b']) {
      const res = await t.request({ method: 'OPTIONS', url });
      expectEnvelope(res, 404, 'NOT_FOUND');
      expect(res.headers.allow).toBeUndefined();
    }
  });
});
