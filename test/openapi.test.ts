import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { engines } from './helpers/app.js';
import { useTestApp } from './helpers/fixtures.js';
import { createUser, login } from './helpers/factories.js';

interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  security?: Array<Record<string, string[]>>;
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}
interface Doc {
  openapi: string;
  tags: Array<{ name: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, Record<string, string>> };
}

/**
 * Every route the app has, from Fastify's own route tree (`printRoutes`): "METHOD /path" with `{param}`.
 * Lines look like `│   ├── /:id (GET, HEAD, PUT)`; a child's path is its parent's plus its own segment.
 */
export function routesOf(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([^)]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const path = (depth > 0 ? stack[depth - 1]! : '') + m[2]!;
    stack[depth] = path;
    stack.length = depth + 1;
    for (const method of (m[3] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      // `:code(^[0-9a-zA-Z]{1,8}$)`: a parameter with a regular expression (groups nested two deep) is still just {code}
      out.push(`${method} ${path.replace(/:(\w+)(?:\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))?/g, '{$1}')}`);
    }
  }
  return out;
}

/** Routes the document leaves out on purpose: HEAD mirrors GET, OPTIONS is generic, and the docs themselves. */
// The docs and the dashboard (GET /, /app, its assets) are pages, not API operations.
const hidden = (route: string): boolean =>
  /^(HEAD|OPTIONS) /.test(route) ||
  / \/(docs|v3\/api-docs|app)(\/|\*|$)/.test(route) ||
  // single sign-on's browser pages (SPEC §23): redirects and HTML, like the dashboard's
  / \/auth\/oidc\//.test(route) ||
  / \/$/.test(route) ||
  / \*$/.test(route);

describe.each(engines)('the OpenAPI document on %s', (engine) => {
  let doc: Doc;
  let operations: Array<[string, string, Operation]>;
  const t = useTestApp(engine);
  beforeAll(async () => {
    const res = await t.request({ url: '/v3/api-docs' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.body as Doc;
    operations = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.entries(item).map(([m, op]) => [m.toUpperCase(), p, op] as [string, string, Operation]),
    );
  });

  it('when fetched, then it is OpenAPI 3.1 that passes the strict 3.1 schema validator', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('when read, then the ErrorEnvelope is a component and the bearer scheme is declared', () => {
    expect(doc.components.schemas.ErrorEnvelope).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['error', 'requestId', 'timestamp']),
    });
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
  });

  it('when compared with the routes the app really has, then every route is documented (and nothing else)', () => {
    const routes = routesOf(t.app.printRoutes({ commonPrefix: false }));
    expect(routes).toContain('GET /api/v1/users/{id}');
    const expected = [...new Set(routes.filter((r) => !hidden(r)))].sort();
    const documented = operations.map(([m, p]) => `${m} ${p}`).sort();
    expect(documented).toEqual(expected);
  });

  it('when read, then every operation has a unique operationId, declared tags and a summary', () => {
    const declaredTags = new Set(doc.tags.map((tag) => tag.name));
    const ids = operations.map(([, , op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [m, p, op] of operations) {
      expect(op.operationId, `${m} ${p}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(op.summary, `${m} ${p}`).toEqual(expect.any(String));
      expect(op.tags?.length, `${m} ${p}`).toBeGreaterThan(0);
      for (const tag of op.tags ?? []) expect(declaredTags, `${m} ${p}`).toContain(tag);
    }
  });

  it('when read, then every operation declares 429 and 500 and every 4xx/5xx points at the ErrorEnvelope', () => {
    for (const [m, p, op] of operations) {
      expect(Object.keys(op.responses), `${m} ${p}`).toEqual(expect.arrayContaining(['429', '500']));
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        expect(response.content?.['application/json']?.schema?.$ref, `${m} ${p} ${status}`).toBe(
          '#/components/schemas/ErrorEnvelope',
        );
      }
    }
  });

  it('when read, then every response has a description of its own (no "Default Response")', () => {
    const vague = new Set(['', 'Default Response', 'The one error shape of every error response']);
    const missing = operations.flatMap(([m, p, op]) =>
      Object.entries(op.responses)
        .filter(([, r]) => vague.has((r as { description?: string }).description ?? ''))
        .map(([status]) => `${m} ${p} (${op.operationId}) ${status}`),
    );
    expect(missing).toEqual([]);
  });

  it("when read, then every response declares X-Request-Id and the API's also CORS and RateLimit, each a shared component", () => {
    const headers = doc.components as unknown as { headers: Record<string, unknown> };
    expect(Object.keys(headers.headers)).toEqual(
      expect.arrayContaining([
        'X-Request-Id',
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
        'Access-Control-Allow-Origin',
        'WWW-Authenticate',
      ]),
    );
    for (const [m, p, op] of operations) {
      for (const [status, r] of Object.entries(op.responses)) {
        const h = (r as { headers?: Record<string, { $ref?: string }> }).headers ?? {};
        const where = `${m} ${p} ${status}`;
        expect(h['X-Request-Id']?.$ref, where).toBe('#/components/headers/X-Request-Id');
        if (p.startsWith('/api/'))
          expect(h['Access-Control-Allow-Origin']?.$ref, where).toBe(
            '#/components/headers/Access-Control-Allow-Origin',
          );
        if (p.startsWith('/api/') && /^[234]/.test(status))
          expect(h.RateLimit?.$ref, where).toBe('#/components/headers/RateLimit');
        if (status === '429' || status === '503')
          expect(h['Retry-After']?.$ref, where).toBe('#/components/headers/Retry-After');
        if (status === '401') expect(h['WWW-Authenticate']?.$ref, where).toBe('#/components/headers/WWW-Authenticate');
      }
    }
  });

  it('when read, then each operation says whether it needs the bearer token, as the app enforces it', async () => {
    const security = Object.fromEntries(operations.map(([m, p, op]) => [`${m} ${p}`, op.security]));
    const jwt = { bearerAuth: [] };
    const key = (scope: string) => ({ apiKey: [scope] });
    expect(security).toMatchObject({
      'POST /api/v1/tokens': [{}],
      'POST /api/v1/users': [{}, jwt],
      'GET /api/v1/users': [jwt, key('users:read')],
      'GET /api/v1/users/me': [jwt, key('users:read')],
      'GET /api/v1/users/{id}': [jwt, key('users:read')],
      'PUT /api/v1/users/{id}': [jwt],
      'PATCH /api/v1/users/{id}': [jwt],
      'DELETE /api/v1/users/{id}': [jwt],
      'DELETE /api/v1/tokens/current': [jwt],
      'DELETE /api/v1/tokens/{jti}': [jwt],
      'POST /api/v1/links': [{}, jwt, key('links:write')],
      'POST /api/v1/orders': [jwt, key('orders:write')],
      'POST /api/v1/users/{id}/api-keys': [jwt],
      'GET /api/v1/users/{id}/api-keys': [jwt, key('users:read')],
      'DELETE /api/v1/users/{id}/api-keys/{key_id}': [jwt],
    });
    // The document and the app agree: without a token exactly the bearer-only operations answer 401.
    const u = await createUser(t);
    for (const [m, p, op] of operations) {
      expect(op.security, `${m} ${p} declares no security`).toBeDefined();
      const required = op.security!.length > 0 && op.security!.every((s) => Object.keys(s).length > 0);
      if (required) expect(op.responses['401'], `${m} ${p}`).toBeDefined();
      const url = p.replace(/\{[^}]+\}/g, '987654321');
      const payload = ['POST', 'PUT', 'PATCH'].includes(m) ? {} : undefined;
      const anonymous = await t.request({ method: m as 'GET', url, payload });
      expect(anonymous.status === 401, `${m} ${p} without a token answered ${anonymous.status}`).toBe(required);
      if (required) {
        // a fresh token each time: one of these operations revokes the token it is called with
        const token = await login(t, u.username, u.password);
        const authed = await t.request({ method: m as 'GET', url, payload, token });
        expect(authed.status, `${m} ${p} with a token`).not.toBe(401);
      }
    }
  });

  it('when /docs is opened, then an HTML page whose every asset is served by the app itself', async () => {
    const page = await t.app.inject({ url: '/docs' });
    expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      expect(asset, asset).toMatch(/^\/docs\/static\//);
      const res = await t.app.inject({ url: asset });
      expect(res.statusCode, `${asset}: ${res.body.slice(0, 200)}`).toBe(200);
      expect(res.rawPayload.length, asset).toBeGreaterThan(0);
    }
    const init = await t.app.inject({ url: '/docs/static/swagger-initializer.js' });
    const config = JSON.parse(/const config = (\{.*\})/.exec(init.body)?.[1] ?? '{}') as Record<string, unknown>;
    expect(config.url).toBeUndefined();
    expect(config.urls).toEqual([
      { url: '/v3/api-docs/v1', name: 'v1' },
      { url: '/v3/api-docs/v2', name: 'v2' },
    ]);
    // Swagger UI's default would fetch a badge from validator.swagger.io (and tell it the document's URL).
    expect(config.validatorUrl).toBeNull();
    expect(init.body).not.toMatch(/petstore/i);
  });

  it.each([1, 2])(
    'when the v%i document of the version selector is fetched, then it has that version and the shared operations only, and is complete',
    async (version) => {
      const res = await t.request({ url: `/v3/api-docs/v${version}` });
      expect(res.status).toBe(200);
      const part = res.body as Doc;
      const paths = Object.keys(part.paths);
      const other = version === 1 ? '/api/v2/' : '/api/v1/';
      expect(paths.filter((p) => p.startsWith(other))).toEqual([]);
      expect(paths).toEqual(Object.keys(doc.paths).filter((p) => !p.startsWith(other)));
      expect(paths).toContain(`/api/v${version}/users/{id}`);
      expect(paths).toContain('/{code}');
      expect(part.components.securitySchemes).toEqual(doc.components.securitySchemes);
      // Every reference resolves inside the part, and no component is there that nothing uses.
      const refs = new Set(
        [...JSON.stringify(part).matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g)].map((m) => `${m[1]}/${m[2]}`),
      );
      for (const r of refs) {
        const [kind, name] = r.split('/');
        expect(
          (part.components as unknown as Record<string, Record<string, unknown>>)[kind!]?.[name!],
          r,
        ).toBeDefined();
      }
      expect(
        Object.keys(part.components.schemas)
          .map((n) => `schemas/${n}`)
          .filter((n) => !refs.has(n)),
      ).toEqual([]);
      expect(Object.keys(part.components.schemas).some((n) => n.endsWith(version === 1 ? 'V2' : 'zzz'))).toBe(false);
      const result = await new Validator().validate(part as unknown as Record<string, unknown>);
      expect(result.errors ?? []).toEqual([]);
    },
  );
});
