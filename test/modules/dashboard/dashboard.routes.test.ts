import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../helpers/app.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';

const INDEX = '<!doctype html><title>Ferry</title><script type="module" src="/app/assets/index-Ab12Cd34.js"></script>';
const SCRIPT = 'console.log("dashboard");'.repeat(20);

/** A built dashboard as `vite build` leaves it: index.html, hashed assets, their gzip variants. */
function fakeBuild(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-web-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'assets', 'index-Ab12Cd34.js'), SCRIPT);
  writeFileSync(path.join(dir, 'assets', 'index-Ab12Cd34.js.gz'), gzipSync(SCRIPT));
  writeFileSync(path.join(dir, 'outside.txt'), 'not an asset');
  return dir;
}

const CSP =
  "default-src 'none';script-src 'self';style-src 'self';img-src 'self' data: blob:;font-src 'self';connect-src 'self';manifest-src 'self';base-uri 'none';form-action 'self';frame-ancestors 'none';require-trusted-types-for 'script';trusted-types 'none'";

/** SPEC §16: the dashboard at /app, served by the same process, with a strict CSP from this origin. */
describe.each(engines)('the dashboard is served on %s', (engine) => {
  let t: TestApp;
  let webDir: string;
  beforeAll(async () => {
    webDir = fakeBuild();
    t = await createTestApp(engine, { env: { WEB_DIR: webDir } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(webDir, { recursive: true, force: true });
  });

  it('when / is requested, then it redirects to /app (GET and HEAD)', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await t.request({ method, url: '/' });
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/app');
    }
  });

  it('when /app or a client-side route under it is requested, then index.html, revalidated on every load', async () => {
    for (const url of ['/app', '/app/', '/app/links/new', '/app/links/abc/stats?period=7d', '/app/users']) {
      const res = await t.request({ url });
      expect(res.status, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.text, url).toBe(INDEX);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.headers.etag, url).toBeTruthy();
    }
  });

  it('when index.html is asked again with its ETag, then 304', async () => {
    const first = await t.request({ url: '/app' });
    const again = await t.request({ url: '/app/links', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.status).toBe(304);
  });

  it('when /app is served, then the strict CSP and the other security headers of the app profile come with it', async () => {
    const res = await t.request({ url: '/app' });
    expect(res.headers['content-security-policy']).toBe(CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('when a hashed asset is requested, then it is cached as immutable for a year and served gzipped to clients that accept it', async () => {
    const plain = await t.request({ url: '/app/assets/index-Ab12Cd34.js' });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(plain.text).toBe(SCRIPT);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-security-policy']).toBe(CSP);
    const gz = await t.request({ url: '/app/assets/index-Ab12Cd34.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toMatch(/accept-encoding/i);
    expect(Number(gz.headers['content-length'])).toBeLessThan(SCRIPT.length);
  });

  it('when an asset does not exist, then 404 in the envelope, never index.html', async () => {
    for (const url of [
      '/app/assets/index-Missing1.js',
      '/app/assets/',
      '/app/assets/.hidden',
      '/app/assets/sub/index-Ab12Cd34.js',
    ]) {
      const res = await t.request({ url });
      expectEnvelope(res, 404, 'NOT_FOUND');
    }
  });

  it('when a path tries to leave the assets folder, then no file outside it is served', async () => {
    for (const url of [
      '/app/assets/%2e%2e/outside.txt',
      '/app/assets/..%2foutside.txt',
      '/app/assets/%2e%2e%2foutside.txt',
      '/app/assets/..%5coutside.txt',
      '/app/assets/%252e%252e/outside.txt',
    ]) {
      const res = await t.request({ url });
      expect(res.text, url).not.toContain('not an asset');
      expect(res.status, url).toBeLessThan(500);
    }
  });

  it('when /app is sent another method, then 405 with Allow', async () => {
    for (const url of ['/app', '/app/links', '/app/assets/index-Ab12Cd34.js']) {
      const res = await t.request({ method: 'POST', url, payload: {} });
      expectEnvelope(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow, url).toBe('GET, HEAD, OPTIONS');
    }
  });

  it('when the API answers, then its own security headers are unchanged by the dashboard', async () => {
    const u = await createUser(t);
    const res = await t.request({ url: '/api/v1/users/me', token: u.token });
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'",
    );
  });

  it('when the OpenAPI document is read, then it describes no dashboard path', async () => {
    const res = await t.request({ url: '/v3/api-docs' });
    expect(Object.keys(res.body.paths).filter((p) => p === '/' || p.startsWith('/app'))).toEqual([]);
  });

  it('when a link is created with the code app (any case), then 400: the dashboard owns that path', async () => {
    for (const code of ['app', 'App', 'APP']) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        payload: { original_url: 'https://example.com/', short_code: code },
      });
      expect(expectEnvelope(res, 400, 'VALIDATION_ERROR'), code).toEqual(['short_code']);
    }
  });
});

describe('the dashboard when it was not built', () => {
  let t: TestApp;
  let webDir: string;
  beforeAll(async () => {
    webDir = mkdtempSync(path.join(tmpdir(), 'ferry-web-empty-'));
    t = await createTestApp('sqlite', { env: { WEB_DIR: webDir } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(webDir, { recursive: true, force: true });
  });

  it('when /app is requested, then 503 in the envelope saying how to build it; / still leads there and the API works', async () => {
    for (const url of ['/app', '/app/links', '/app/assets/index-Ab12Cd34.js']) {
      const res = await t.request({ url });
      expectEnvelope(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.body.error.message, url).toMatch(/npm run build/);
    }
    expect((await t.request({ url: '/' })).status).toBe(302);
    expect((await t.request({ url: '/healthz' })).status).toBe(200);
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/' } }))
        .status,
    ).toBe(201);
  });
});
