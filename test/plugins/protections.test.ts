import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { uniqueName } from '../helpers/factories.js';

describe.each(engines)('security headers and request limits on %s', (engine) => {
  const t = useTestApp(engine, { env: { BODY_LIMIT_BYTES: '2048' } });

  it('when the API answers (success or error), then it sends a JSON API CSP, nosniff, no framing, no referrer, and no HSTS on http', async () => {
    const username = uniqueName();
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { username, email: `${username}@example.com`, password: 'long-enough-pw' },
    });
    const denied = await t.request({ url: '/api/v1/users/1' });
    for (const res of [created, denied]) {
      expect(res.headers['content-security-policy']).toBe(
        "default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'",
      );
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(res.headers).not.toHaveProperty('strict-transport-security');
      expect(res.headers).not.toHaveProperty('x-powered-by');
    }
  });

  it('when /docs is served, then its CSP lets Swagger UI run from this origin only', async () => {
    const page = await t.app.inject({ url: '/docs/' });
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self' http://127.0.0.1:3000");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|https:/);
    // Every script and stylesheet of the page is a local asset that the server has.
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(3);
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(https?:)?\/\//);
      const url = new URL(asset, 'http://x/docs/').pathname;
      expect((await t.app.inject({ url })).statusCode, url).toBe(200);
    }
    expect(page.body).not.toMatch(/<script>(?!\s*<\/script>)/); // no inline script the CSP would block
  });

  it('when the operational endpoints answer, then they carry no helmet headers (kept cheap, like the redirect)', async () => {
    const res = await t.request({ url: '/healthz' });
    expect(res.headers).not.toHaveProperty('content-security-policy');
    expect(res.headers).not.toHaveProperty('x-frame-options');
  });

  it('when a body is larger than BODY_LIMIT_BYTES, then 413 PAYLOAD_TOO_LARGE in the envelope', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { username: 'big', email: 'big@example.com', password: 'x'.repeat(4096) },
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: expect.any(String), details: [] });
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('security headers behind TLS', () => {
  it('when PUBLIC_BASE_URL is https, then API responses carry HSTS', async () => {
    const t = await createTestApp('sqlite', { env: { PUBLIC_BASE_URL: 'https://ferry.example' } });
    try {
      const res = await t.request({ url: '/api/v1/users/1' });
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    } finally {
      await t.close();
    }
  });
});

describe('slow clients', () => {
  let port: number;
  const t = useTestApp('sqlite', { env: { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' } });
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });

  it('when a client trickles its headers (slow loris), then the server answers 408 and closes the connection after HEADERS_TIMEOUT_MS', async () => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => socket.write(`X-Slow-${Date.now()}: 1\r\n`), 200);
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    const closedAfter = await new Promise<number>((resolve, reject) => {
      socket.on('close', () => resolve(Date.now() - started));
      socket.on('error', () => undefined);
      setTimeout(() => reject(new Error('the connection was never closed')), 8000);
    }).finally(() => clearInterval(trickle));
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(4000);
    // Meanwhile a well-behaved client is served.
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(ok.status).toBe(200);
  });
});
