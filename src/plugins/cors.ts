import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { METHODS } from './methods.js';
import { declareResponseHeaders } from './response-headers.js';

/** Response headers a browser client may read (CORS exposes only the safelisted ones otherwise). */
export const EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'X-Request-Id',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'Idempotent-Replayed',
  'Link',
  'Deprecation',
  'Sunset',
  'Allow',
  'Accept-Patch',
  'WWW-Authenticate',
];

/** Request headers a cross-origin caller may send. */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'Idempotency-Key',
  'X-Request-Id',
  'Accept',
];

/**
 * CORS for the configured origins (CORS_ORIGINS). A preflight is answered with the methods the path really
 * has (computed by plugins/methods.ts); an origin not on the list gets no Access-Control-Allow-Origin.
 */
async function corsPlugin(app: FastifyInstance, opts: { corsOrigins: string[] }): Promise<void> {
  const origins = opts.corsOrigins;
  // The header values joined once; one options object for every request but a preflight (the only one that
  // sends the path's methods), not a new one with its lists joined again per request.
  const exposedHeaders = EXPOSED_HEADERS.join(', ');
  const allowedHeaders = ALLOWED_HEADERS.join(', ');
  const optionsFor = (methods: string[]) => ({
    origin: origins.includes('*') ? '*' : origins,
    methods,
    exposedHeaders,
    allowedHeaders,
    maxAge: 600,
    strictPreflight: false,
  });
  const everyMethod = optionsFor([...METHODS, 'OPTIONS']);
  await app.register(cors, {
    delegator: (req: FastifyRequest, cb: (err: Error | null, o: object) => void) =>
      cb(null, req.allowedMethods ? optionsFor(req.allowedMethods) : everyMethod),
  } as never);
  // Any answer of this context may carry Access-Control-Allow-Origin (for an allowed Origin).
  app.addHook('onRoute', (route) => declareResponseHeaders(route, ['Access-Control-Allow-Origin']));
}

export default fp(corsPlugin, { name: 'ferry-cors' });
