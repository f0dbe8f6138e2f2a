import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorEnvelopeSchema, ref } from '../lib/common.schemas.js';
import securityHeadersPlugin from './security-headers.js';

/**
 * The published contract (SPEC §10): @fastify/swagger builds OpenAPI 3.1 from the same TypeBox schemas that
 * validate requests and serialise responses; schemas registered with an `$id` keep it as their component name.
 * `GET /v3/api-docs` serves it; `GET /docs` serves Swagger UI from the package's bundled assets (no CDN).
 */
/** Statuses any route can answer, whatever it does: declared on every route so the document stays true. */
const ALWAYS = [429, 500, 503];
const WITH_BODY = [400, 413, 415];
/** 429 (RFC 6585 §4) and 503 (RFC 9110 §10.2.3) always carry Retry-After. */
const RETRY_AFTER = { 'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait before retrying' } };

async function openapiPlugin(app: FastifyInstance, opts: { publicBaseUrl: string }): Promise<void> {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { response?: Record<string, unknown>; hide?: boolean } | undefined;
    if (!schema?.response || schema.hide) return;
    const methods = [route.method].flat();
    const statuses = methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH') ? [...ALWAYS, ...WITH_BODY] : [...ALWAYS];
    // Every API operation is also reachable unversioned (/api/...), where an unknown version is 406 or 400.
    if (route.url.startsWith('/api/')) statuses.push(400, 406);
    for (const status of statuses) schema.response[status] ??= ref(ErrorEnvelopeSchema);
    for (const status of [429, 503]) {
      const r = schema.response[status] as Record<string, unknown>;
      schema.response[status] = { ...r, headers: { ...(r.headers as object | undefined), ...RETRY_AFTER } };
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Ferry API',
        version: '1.0.0',
        description:
          'User accounts, orders and short links. Every error uses the ErrorEnvelope component; every response carries X-Request-Id.\n\n' +
          'Versions: `/api/v1/...` and `/api/v2/...` are described here. v2 differs from v1 only in camelCase link fields and ' +
          'cursor-only collections. Every operation is also reachable without the version segment (`/api/...`): the version is then ' +
          'chosen by `Accept: application/vnd.ferry.vN+json`, else by `?version=N`, else v1; the response Content-Type names it and ' +
          'carries `Vary: Accept`. An unknown version is 406 (Accept) or 400 (query).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: opts.publicBaseUrl }],
      tags: [
        { name: 'users', description: 'User accounts' },
        { name: 'tokens', description: 'Bearer tokens (JWT, HS256)' },
        { name: 'orders', description: 'Orders with idempotent creation' },
        { name: 'links', description: 'Short links and their statistics' },
        { name: 'redirect', description: 'Short-code redirects' },
        { name: 'operations', description: 'Health, readiness and metrics' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'An HS256 JWT from POST /api/v1/tokens, verified as RFC8725 (RFC 8725) recommends: algorithm pinned to HS256, exp checked.',
          },
        },
      },
    },
    convertConstToEnum: false,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });

  // The document and Swagger UI in their own context, with the docs' security headers (CSP for the UI).
  await app.register(async (docs) => {
    await docs.register(securityHeadersPlugin, { profile: 'docs', publicBaseUrl: opts.publicBaseUrl });
    docs.get('/v3/api-docs', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=60');
      return app.swagger();
    });
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      // validatorUrl null: otherwise Swagger UI loads a badge from validator.swagger.io, sending it the spec's URL.
      uiConfig: { url: '/v3/api-docs', deepLinking: true, validatorUrl: null },
      staticCSP: false,
    });
  });
}

export default fp(openapiPlugin, { name: 'ferry-openapi' });
