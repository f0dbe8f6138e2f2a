import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { useTestApp } from '../helpers/fixtures.js';

const METRICS_TOKEN = 'metrics-token-of-this-test-1234';

/** SPEC §17: /metrics behind METRICS_TOKEN when it is set; the OpenAPI document cacheable and rate-limited. */
describe.each(engines)('/metrics and the OpenAPI document on %s', (engine) => {
  // Six requests a minute per caller: the document's one (taken by the test helper) and five more.
  const t = useTestApp(engine, { env: { METRICS_TOKEN, RATE_LIMIT_PER_MINUTE: '6' } });
  const open = useTestApp(engine);

  it('when METRICS_TOKEN is set, then /metrics answers only that bearer token; without it, anyone', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token-of-the-same-len' },
      { authorization: `Basic ${METRICS_TOKEN}` },
      { authorization: `Bearer ${METRICS_TOKEN}x` },
    ] as Array<Record<string, string>>) {
      const res = await t.request({ url: '/metrics', headers, remoteAddress: '192.0.2.10' });
      expectEnvelope(res, 401, 'UNAUTHENTICATED');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="metrics"/);
    }
    const ok = await t.request({
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      remoteAddress: '192.0.2.10',
    });
    expect(ok.status).toBe(200);
    expect(ok.text).toMatch(/^# HELP /m);
    expect((await open.request({ url: '/metrics' })).status).toBe(200);
  });

  it('when the OpenAPI documents are fetched again with their ETag, then 304 with the ETag and Cache-Control, and no body', async () => {
    for (const url of ['/v3/api-docs', '/v3/api-docs/v1', '/v3/api-docs/v2']) {
      const first = await open.app.inject({ url });
      expect(first.statusCode).toBe(200);
      expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(first.headers['cache-control']).toBe('public, max-age=60');
      expect(first.json().openapi).toBe('3.1.0');
      const again = await open.app.inject({ url, headers: { 'if-none-match': first.headers.etag as string } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(first.headers.etag);
      expect(again.headers['cache-control']).toBe('public, max-age=60');
    }
  });

  it('when a caller fetches the document, then it counts against the same budget as the API: past it, 429 RATE_LIMITED with RateLimit fields', async () => {
    const from = { remoteAddress: '198.51.100.23' };
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await t.app.inject({ url: '/v3/api-docs', ...from })).statusCode);
    for (let i = 0; i < 3; i += 1) statuses.push((await t.request({ url: '/api/v1/links/nOsUch99', ...from })).status);
    expect(statuses).toEqual([200, 200, 200, 404, 404, 404]);
    const limited = await t.app.inject({ url: '/v3/api-docs', ...from });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
    expect((await t.request({ url: '/api/v1/links/nOsUch99', ...from })).status).toBe(429);
    // Another caller has a budget of its own.
    expect((await t.app.inject({ url: '/v3/api-docs', remoteAddress: '198.51.100.24' })).statusCode).toBe(200);
  });
});
