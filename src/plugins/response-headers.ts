import type { RouteOptions } from 'fastify';

/**
 * The response headers Ferry sends, each described once with a bounded schema. A plugin that sets a header
 * declares it on the routes it covers with `declareResponseHeaders` (CORS on the API, RateLimit where a limit
 * applies, …); the document transform (openapi.ts) adds the ones every response carries and turns every
 * declaration into a `$ref` to `components.headers`, so the document states each header once.
 */
const NO_CONTROL = '^[\\x20-\\x7E]*$';
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      "The request's id: the client's own X-Request-Id when it is 1-128 safe characters, else a new UUID. Also `requestId` in error bodies and in the log.",
    schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:@+=-]{1,128}$' },
  },
  'Cache-Control': {
    description: 'private, no-cache on successful reads (revalidate with the ETag); no-store on writes and errors',
    schema: { type: 'string', maxLength: 128, pattern: NO_CONTROL },
  },
  'Access-Control-Allow-Origin': {
    description:
      "CORS: the request's Origin when it is one of CORS_ORIGINS (or `*` when any origin is allowed); absent otherwise",
    schema: { type: 'string', maxLength: 2048, pattern: '^(\\*|null|https?://[^\\s]+)$' },
  },
  RateLimit: {
    description: 'Remaining quota per policy (draft-ietf-httpapi-ratelimit-headers), e.g. `"default";r=599;t=42`',
    schema: { type: 'string', maxLength: 512, pattern: '^"[a-z-]+";r=\\d+;t=\\d+(, "[a-z-]+";r=\\d+;t=\\d+)*$' },
  },
  'RateLimit-Policy': {
    description: 'Quota policies applied to this request, e.g. `"default";q=600;w=60`',
    schema: { type: 'string', maxLength: 512, pattern: '^"[a-z-]+";q=\\d+;w=\\d+(, "[a-z-]+";q=\\d+;w=\\d+)*$' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400 },
  },
  'WWW-Authenticate': {
    description:
      'The bearer challenge (RFC 6750): `error="invalid_token"` for a refused credential, `error="insufficient_scope", scope="…"` for an API key without the scope the operation needs. ' +
      "A password-protected link's redirect challenges with Basic (API clients) or Form (its HTML page)",
    schema: { type: 'string', maxLength: 512, pattern: '^(Bearer|Basic|Form)( [\\x20-\\x7E]*)?$' },
  },
  Location: {
    description: "Where the created resource is, or (the redirect) the link's original_url exactly as stored",
    schema: { type: 'string', format: 'uri-reference', maxLength: 2048 },
  },
} as const;

export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

type ResponseSchemas = Record<string, Record<string, unknown>>;

/** Declares headers on the responses of a route whose status passes `when` (all by default). */
export function declareResponseHeaders(
  route: RouteOptions,
  names: readonly ResponseHeaderName[],
  when: (status: string) => boolean = () => true,
): void {
  const response = (route.schema as { response?: ResponseSchemas } | undefined)?.response;
  if (!response) return;
  for (const [status, schema] of Object.entries(response)) {
    if (!when(status)) continue;
    const headers = { ...(schema.headers as Record<string, unknown> | undefined) };
    for (const name of names)
      headers[name] ??= { ...RESPONSE_HEADERS[name].schema, description: RESPONSE_HEADERS[name].description };
    response[status] = { ...schema, headers };
  }
}

interface HeaderObject {
  $ref?: string;
  description?: string;
  schema?: unknown;
}
type Responses = Record<string, { description?: string; headers?: Record<string, HeaderObject> }>;

/**
 * The document's response headers as references to `components.headers` (a route's own description of a
 * shared header is kept beside the reference, as OpenAPI 3.1 allows), plus `always` on every response.
 */
export function referenceSharedHeaders(
  doc: { paths?: Record<string, Record<string, { responses?: Responses }>>; components?: Record<string, unknown> },
  always: readonly ResponseHeaderName[],
): void {
  const components: Record<string, HeaderObject> = {};
  for (const [name, h] of Object.entries(RESPONSE_HEADERS))
    components[name] = { description: h.description, schema: h.schema };
  doc.components = { ...doc.components, headers: components };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op.responses ?? {})) {
        const headers: Record<string, HeaderObject> = { ...response.headers };
        for (const name of always) headers[name] ??= {};
        for (const [name, header] of Object.entries(headers)) {
          if (!(name in RESPONSE_HEADERS)) continue;
          const shared = RESPONSE_HEADERS[name as ResponseHeaderName];
          const own =
            header.description && header.description !== shared.description ? { description: header.description } : {};
          headers[name] = { $ref: `#/components/headers/${name}`, ...own };
        }
        response.headers = headers;
      }
    }
  }
}
