import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/app-error.js';
import { checkRequestTarget, type RouteFinder } from './request-target.js';

/**
 * API versions (SPEC §9). `/api/v1/...` and `/api/v2/...` are the real routes. An unversioned `/api/...`
 * path is rewritten, before routing, to the version the client asked for:
 *   1. `Accept: application/vnd.ferry.vN+json` (an unknown N: 406 NOT_ACCEPTABLE),
 *   2. otherwise `?version=N` (an unknown N: 400 VALIDATION_ERROR on `version`),
 *   3. otherwise v1.
 * A versioned path always wins: there the Accept header and `version` are not consulted. Answers to
 * unversioned paths name the version in their Content-Type (`application/vnd.ferry.vN+json`) and carry
 * `Vary: Accept`. Versions named deprecated by configuration carry Deprecation (RFC 9745), a
 * `Link rel="deprecation"` and Sunset (RFC 8594).
 */
export const VERSIONS = [1, 2] as const;
export type ApiVersion = (typeof VERSIONS)[number];

export interface VersionPolicy {
  /** epoch ms from which the version is deprecated */
  deprecatedAt?: number | null;
  /** epoch ms after which it may be gone */
  sunsetAt?: number | null;
  /** where the deprecation is explained */
  link?: string | null;
}

interface Negotiated {
  version: ApiVersion;
  negotiated: boolean;
  error: AppError | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    apiVersion?: Negotiated;
  }
}

const VERSIONED = /^\/api\/v\d+(\/|$)/;
const VENDOR = /application\/vnd\.ferry\.v([^+;,\s]*)\+json/i;
const kNegotiated = Symbol('ferry.negotiatedVersion');
type RawWithVersion = IncomingMessage & { [kNegotiated]?: Negotiated };

const isKnown = (n: number): n is ApiVersion => (VERSIONS as readonly number[]).includes(n);

/**
 * Fastify's rewriteUrl: checks the request target (request-target.ts, SPEC §12), then chooses the version of
 * an unversioned /api path and records how. `this` is the Fastify instance (used to name a path parameter).
 */
export function rewriteVersionedUrl(this: RouteFinder | undefined, req: IncomingMessage): string {
  const url = req.url ?? '/';
  const malformed = checkRequestTarget(this, req);
  if (!url.startsWith('/api/') || VERSIONED.test(url)) return url;
  let version: ApiVersion = 1;
  let error: AppError | null = null;
  const accept = VENDOR.exec(req.headers.accept ?? '');
  const query = /[?&]version=([^&]*)/.exec(url);
  if (accept) {
    const n = Number(accept[1]);
    if (isKnown(n)) version = n;
    else
      error = new AppError(
        'NOT_ACCEPTABLE',
        `API version ${accept[1]} is not served; use application/vnd.ferry.v1+json or application/vnd.ferry.v2+json`,
      );
  } else if (query) {
    // A malformed target is already answered (request-target.ts); its query is not decoded here.
    const n = malformed ? NaN : Number(decodeURIComponent(query[1]!));
    if (isKnown(n)) version = n;
    else if (!malformed)
      error = new AppError('VALIDATION_ERROR', 'Unknown API version', [
        { field: 'version', message: `must be one of ${VERSIONS.join(', ')}` },
      ]);
  }
  (req as RawWithVersion)[kNegotiated] = { version, negotiated: true, error };
  return `/api/v${version}${url.slice(4)}`;
}

async function versioningPlugin(
  app: FastifyInstance,
  opts: { policies: Partial<Record<ApiVersion, VersionPolicy>> },
): Promise<void> {
  // v2 routes are the v1 routes registered again: give them their own operationIds and, since v2 collections
  // page by cursor only, drop `page` from what their query strings document (a `page` sent anyway is a 400).
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v2/')) return;
    const schema = route.schema as
      { operationId?: string; querystring?: { properties?: Record<string, unknown>; required?: string[] } } | undefined;
    if (!schema) return;
    if (schema.operationId && !schema.operationId.endsWith('V2')) schema.operationId += 'V2';
    const qs = schema.querystring;
    if (qs?.properties?.page) {
      const { page: _page, ...properties } = qs.properties;
      schema.querystring = { ...qs, properties, required: qs.required?.filter((r) => r !== 'page') };
    }
  });

  app.addHook('onRequest', async (request) => {
    const negotiated = (request.raw as RawWithVersion)[kNegotiated];
    if (negotiated?.error) throw negotiated.error;
    const m = /^\/api\/v(\d+)(\/|$)/.exec(request.url);
    if (m && isKnown(Number(m[1])))
      request.apiVersion = negotiated ?? { version: Number(m[1]) as ApiVersion, negotiated: false, error: null };
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const v = request.apiVersion ?? (request.raw as RawWithVersion)[kNegotiated];
    if (!v) return payload;
    if (v.negotiated) {
      reply.header('vary', 'Accept');
      const type = String(reply.getHeader('content-type') ?? '');
      if (type.startsWith('application/json'))
        reply.header('content-type', `application/vnd.ferry.v${v.version}+json; charset=utf-8`);
    }
    const policy = opts.policies[v.version];
    if (policy?.deprecatedAt) {
      reply.header('deprecation', `@${Math.floor(policy.deprecatedAt / 1000)}`);
      if (policy.link)
        reply.header(
          'link',
          appendLink(reply.getHeader('link'), `<${policy.link}>; rel="deprecation"; type="text/html"`),
        );
    }
    if (policy?.sunsetAt) reply.header('sunset', new Date(policy.sunsetAt).toUTCString());
    return payload;
  });
}

function appendLink(existing: unknown, link: string): string {
  const prior = Array.isArray(existing) ? existing.join(', ') : typeof existing === 'string' ? existing : '';
  return prior ? `${prior}, ${link}` : link;
}

export default fp(versioningPlugin, { name: 'ferry-versioning' });
