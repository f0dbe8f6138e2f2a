import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { createUser } from '../helpers/factories.js';

const ALLOWED = 'https://app.example.com';
const OTHER = 'http://localhost:5173';

const methodsOf = (header: unknown): string[] =>
  String(header)
    .split(',')
    .map((s) => s.trim())
    .sort();

/** SPEC §1: CORS preflights are answered for the configured origins (CORS_ORIGINS), with the path's methods. */
describe.each(engines)('CORS on %s', (engine) => {
  const t = useTestApp(engine, { env: { CORS_ORIGINS: `${ALLOWED},${OTHER}` } });

  const preflight = (url: string, origin: string, method: string, headers = 'authorization, content-type') =>
    t.request({
      method: 'OPTIONS',
      url,
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });

  it('when a configured origin preflights a record path, then 204 allowing that origin and every method of the path', async () => {
    for (const origin of [ALLOWED, OTHER]) {
      const res = await preflight('/api/v1/users/7', origin, 'PATCH', 'authorization, content-type, if-match');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(String(res.headers.vary)).toMatch(/Origin/);
      expect(methodsOf(res.headers['access-control-allow-methods'])).toEqual([
        'DELETE',
        'GET',
        'HEAD',
        'OPTIONS',
        'PATCH',
        'PUT',
      ]);
      const allowedHeaders = String(res.headers['access-control-allow-headers']).toLowerCase();
      for (const h of ['authorization', 'content-type', 'if-match', 'if-none-match', 'idempotency-key'])
        expect(allowedHeaders).toContain(h);
      expect(res.headers['access-control-max-age']).toBe('600');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('when a configured origin preflights the collection or the tokens paths, then their own methods are listed', async () => {
    expect(
      methodsOf((await preflight('/api/v1/users', ALLOWED, 'POST')).headers['access-control-allow-methods']),
    ).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
    expect(
      methodsOf((await preflight('/api/v1/tokens/current', ALLOWED, 'DELETE')).headers['access-control-allow-methods']),
    ).toEqual(['DELETE', 'OPTIONS']);
  });

  it('when an origin that is not configured preflights, then no Access-Control-Allow-Origin is given', async () => {
    for (const origin of [
      'https://evil.example',
      'https://app.example.com.evil.example',
      'null',
      'http://app.example.com',
    ]) {
      const res = await preflight('/api/v1/users/7', origin, 'DELETE');
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('when a configured origin makes the real request, then ACAO and the exposed headers a client needs', async () => {
    const u = await createUser(t);
    const res = await t.request({ url: `/api/v1/users/${u.id}`, token: u.token, headers: { origin: ALLOWED } });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    for (const h of ['etag', 'location', 'x-request-id', 'link', 'www-authenticate', 'retry-after'])
      expect(exposed).toContain(h);
    const err = await t.request({ url: '/api/v1/users/me', headers: { origin: ALLOWED } });
    expect(err.status).toBe(401);
    expect(err.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('when another origin makes the real request, then the response has no ACAO', async () => {
    const u = await createUser(t);
    const res = await t.request({
      url: `/api/v1/users/${u.id}`,
      token: u.token,
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('when a preflight names an unknown path, then 404', async () => {
    const res = await preflight('/api/v1/nothing', ALLOWED, 'GET');
    expectEnvelope(res, 404, 'NOT_FOUND');
  });
});

describe.each(engines)('CORS without CORS_ORIGINS on %s', (engine) => {
  it('when no origin is configured, then no origin is ever allowed', async () => {
    const t = await createTestApp(engine);
    try {
      const res = await t.request({
        method: 'OPTIONS',
        url: '/api/v1/users',
        headers: { origin: ALLOWED, 'access-control-request-method': 'POST' },
      });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const get = await t.request({ method: 'POST', url: '/api/v1/users', payload: {}, headers: { origin: ALLOWED } });
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
