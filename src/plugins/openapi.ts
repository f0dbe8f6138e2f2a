import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { createHash } from 'node:crypto';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, onRequestHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorEnvelopeSchema, ref } from '../lib/common.schemas.js';
import conditionalPlugin from './conditional.js';
import type { RateLimitHook } from './rate-limit.js';
import { VERSIONS } from './versioning.js';
import { documentForVersion } from './openapi-versions.js';
import { declareResponseHeaders, referenceSharedHeaders } from './response-headers.js';
import securityHeadersPlugin from './security-headers.js';

/**
 * The published contract (SPEC §10): @fastify/swagger builds OpenAPI 3.1 from the same TypeBox schemas that
 * validate requests and serialise responses; schemas registered with an `$id` keep it as their component name.
 * `GET /v3/api-docs` serves the whole document; `/v3/api-docs/v1` and `/v2` one version each, which `GET /docs`
 * (Swagger UI from the package's bundled assets, no CDN) offers in its version selector.
 *
 * What every operation shares is added here, once, rather than by each route: the statuses any route can
 * answer, the headers every response carries (as `components.headers`), a description for each error status,
 * and an explicit `security: [{}]` on public operations.
 */
/**
 * Statuses any route can answer, whatever it does: declared on every route so the document stays true. 400:
 * a request target with malformed percent-encoding or no Host; 408, 414, 431: a request that stalls, a
 * request target past 8 KiB, headers past 16 KiB (SPEC §12).
 */
const ALWAYS = [400, 408, 414, 429, 431, 500, 503];
const WITH_BODY = [413, 415];

/** What each error status means here; a route may give its own description instead. */
const ERROR_DESCRIPTIONS: Record<string, string> = {
  400: 'VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON',
  401: 'UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate); INVALID_CREDENTIALS: a wrong second factor, or a sign-in code that is unknown, used or expired; TOTP_REQUIRED: two-factor sign-in is on and no code was sent',
  403: "FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts; TOTP_SETUP_REQUIRED: an admin without two-factor sign-in while TOTP_REQUIRED_FOR_ADMINS=true may only set it up",
  404: 'NOT_FOUND: no such resource (or it expired)',
  406: 'NOT_ACCEPTABLE: Accept names an API version that is not served',
  409: 'CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin)',
  410: 'Gone: the link expired (LINK_EXPIRED), was used up (LINK_EXHAUSTED) or was disabled by an admin (LINK_DISABLED)',
  408: 'REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed)',
  412: 'PRECONDITION_FAILED: If-Match does not match the current ETag',
  413: 'PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES',
  414: 'URI_TOO_LONG: the request target (path and query) is longer than 8192 characters',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding)',
  422: "A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request)",
  429: 'RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds',
  431: 'REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed)',
  500: 'INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it',
  503: 'SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds',
};
const ENVELOPE_DESCRIPTION = (ErrorEnvelopeSchema as { description?: string }).description;

interface Operation {
  security?: Array<Record<string, string[]>>;
  responses?: Record<string, { description?: string }>;
}
type Document = {
  paths?: Record<string, Record<string, Operation>>;
  components?: Record<string, unknown>;
  [k: string]: unknown;
};

/** The finishing pass over the generated document (see the comment at the top). */
export function finishDocument(doc: Document): Document {
  referenceSharedHeaders(doc, ['X-Request-Id', 'Cache-Control']);
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      // `[{}]`, not `[]`: the same meaning (no credential needed), said explicitly rather than by omission.
      if (op.security?.length === 0) op.security = [{}];
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const meaning = ERROR_DESCRIPTIONS[status];
        if (meaning && (!response.description || response.description === ENVELOPE_DESCRIPTION))
          response.description = meaning;
      }
    }
  }
  return doc;
}

/** A document serialised once, with the ETag of its bytes: it does not change while the process runs. */
function servedOnce(build: () => unknown): () => { body: string; etag: string } {
  let served: { body: string; etag: string } | null = null;
  return () => {
    if (served === null) {
      const body = JSON.stringify(build());
      served = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    }
    return served;
  };
}

/** Cacheable by anyone for a minute, then revalidated by its ETag (a 304 from plugins/conditional.ts). */
function sendDocument(reply: FastifyReply, document: { body: string; etag: string }): FastifyReply {
  return reply
    .header('cache-control', 'public, max-age=60')
    .header('etag', document.etag)
    .type('application/json; charset=utf-8')
    .send(document.body);
}

/** Every documented route's error responses: the envelope for each status any route can answer, and their headers. */
function declareErrorResponses(route: RouteOptions): void {
  const schema = route.schema as { response?: Record<string, unknown>; hide?: boolean } | undefined;
  if (!schema?.response || schema.hide) return;
  const methods = [route.method].flat();
  const statuses = methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH' || m === 'DELETE')
    ? [...ALWAYS, ...WITH_BODY]
    : [...ALWAYS];
  // Every API operation is also reachable unversioned (/api/...), where an unknown version is 406 or 400.
  if (route.url.startsWith('/api/')) statuses.push(406);
  for (const status of statuses) schema.response[status] ??= ref(ErrorEnvelopeSchema);
  // 429 (RFC 6585 §4) and 503 (RFC 9110 §10.2.3) always carry Retry-After; 401 always a challenge (RFC 6750).
  declareResponseHeaders(route, ['Retry-After'], (s) => s === '429' || s === '503');
  declareResponseHeaders(route, ['WWW-Authenticate'], (s) => s === '401');
}

/** The document's tags, in the order the docs show them. */
const TAGS = [
  { name: 'users', description: 'User accounts' },
  { name: 'tokens', description: 'Bearer tokens (JWT, HS256)' },
  { name: 'two-factor', description: "Two-factor sign-in (TOTP): the caller's set-up, recovery codes, turning it off" },
  { name: 'orders', description: 'Orders with idempotent creation' },
  { name: 'links', description: 'Short links and their statistics' },
  { name: 'domains', description: 'Host names links live on: verification, fallbacks, certificates on demand' },
  { name: 'api-keys', description: 'API keys: long-lived, scoped credentials for scripts' },
  {
    name: 'imports',
    description: 'Imports from other link services (Shlink, Kutt, YOURLS, Bitly, Dub, CSV); admin only',
  },
  {
    name: 'webhooks',
    description: 'Webhooks: events POSTed to your URL, signed (Standard Webhooks), retried for three days',
  },
  { name: 'events', description: "Events (SPEC §22): the live stream; each event type's payload is in `webhooks`" },
  { name: 'audit', description: 'Who did what: the audit log, admin only' },
  { name: 'redirect', description: 'Short-code redirects' },
  { name: 'operations', description: 'Health, readiness and metrics' },
  {
    name: 'instance',
    description: 'What this instance allows before signing in (sign-up, anonymous links, first run)',
  },
];

/** The document's head: info, servers, tags and the security schemes. */
function documentHead(publicBaseUrl: string): NonNullable<FastifyDynamicSwaggerOptions['openapi']> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Ferry API',
      version: '1.0.0',
      description:
        'User accounts, orders, short links and API keys. Every error uses the ErrorEnvelope component; every response carries X-Request-Id.\n\n' +
        'Versions: `/api/v1/...` and `/api/v2/...` are described here. v2 differs from v1 only in camelCase link and API-key fields and ' +
        'cursor-only collections. Every operation is also reachable without the version segment (`/api/...`): the version is then ' +
        'chosen by `Accept: application/vnd.ferry.vN+json`, else by `?version=N`, else v1; the response Content-Type names it and ' +
        'carries `Vary: Accept`. An unknown version is 406 (Accept) or 400 (query).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      {
        url: publicBaseUrl,
        description: 'This deployment (PUBLIC_BASE_URL; local by default)',
        'x-internal': false,
      } as { url: string },
    ],
    tags: TAGS,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'An HS256 JWT from POST /api/v1/tokens, verified as RFC8725 (RFC 8725) recommends: algorithm pinned to HS256, exp checked.',
        },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'fry_ API key',
          description:
            'An API key from POST /api/v1/users/{id}/api-keys, sent as `Authorization: Bearer fry_…` (the same header as a JWT). ' +
            "It acts as its user (never above the user's current role and status) and only within its scopes: each operation lists the one " +
            'scope it needs; outside it the answer is 403 INSUFFICIENT_SCOPE with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`. ' +
            'Operations that do not list this scheme take a JWT only.',
        },
      },
    },
  };
}

async function openapiPlugin(
  app: FastifyInstance,
  opts: {
    publicBaseUrl: string;
    rateLimit?: onRequestHookHandler | RateLimitHook;
    /** the 3.1 document's `webhooks` (the events module's: each event type's payload) */
    webhooks?: Record<string, unknown>;
  },
): Promise<void> {
  app.addHook('onRoute', declareErrorResponses);

  await app.register(swagger, {
    openapi: documentHead(opts.publicBaseUrl),
    convertConstToEnum: false,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transformObject: (documentObject) => {
      const doc = finishDocument((documentObject as { openapiObject: Document }).openapiObject);
      if (opts.webhooks) (doc as { webhooks?: unknown }).webhooks = opts.webhooks;
      return doc as never;
    },
  });

  // The document and Swagger UI in their own context, with the docs' security headers (CSP for the UI), the
  // caller's rate limit (SPEC §17: the document is half a megabyte) and ETags with If-None-Match.
  await app.register(async (docs) => {
    await docs.register(securityHeadersPlugin, { profile: 'docs', publicBaseUrl: opts.publicBaseUrl });
    if (opts.rateLimit) docs.addHook('onRequest', opts.rateLimit);
    await docs.register(conditionalPlugin);
    const whole = servedOnce(() => app.swagger());
    docs.get('/v3/api-docs', { schema: { hide: true } }, async (_request, reply) => sendDocument(reply, whole()));
    for (const version of VERSIONS) {
      const one = servedOnce(() => documentForVersion(app.swagger() as never, version));
      docs.get(`/v3/api-docs/v${version}`, { schema: { hide: true } }, async (_request, reply) =>
        sendDocument(reply, one()),
      );
    }
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      // One document per version in the UI's selector, v1 (the default version) shown first; validatorUrl null: otherwise Swagger
      // UI loads a badge from validator.swagger.io, sending it the spec's URL.
      uiConfig: {
        urls: VERSIONS.map((v) => ({ url: `/v3/api-docs/v${v}`, name: `v${v}` })),
        'urls.primaryName': `v${VERSIONS[0]}`,
        deepLinking: true,
        validatorUrl: null,
      } as never,
      staticCSP: false,
    });
  });
}

export default fp(openapiPlugin, { name: 'ferry-openapi' });
