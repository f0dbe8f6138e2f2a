import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay from 'find-my-way';
import { AppError } from '../lib/app-error.js';
import type { Clock } from '../lib/clock.js';
import { sendAppError } from './errors.js';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

declare module 'fastify' {
  interface FastifyRequest {
    allowedMethods?: string[];
  }
}

/**
 * Which methods a path has, for 405 + Allow and OPTIONS (SPEC §1, RFC 9110 §15.5.6). Fastify answers an
 * unregistered method with 404, so every route is also recorded in a small router of our own that is only
 * consulted when Fastify found nothing (and for OPTIONS).
 */
async function methodsPlugin(app: FastifyInstance, opts: { clock: Clock }): Promise<void> {
  const router = FindMyWay({ ignoreTrailingSlash: false });
  const seen = new Set<string>();
  app.addHook('onRoute', (route) => {
    // The CORS preflight catch-all (OPTIONS *) says nothing about a path's methods: OPTIONS is not in METHODS.
    // Other wildcards (the dashboard's client routes and assets, Swagger UI's files) are real GET routes.
    for (const m of [route.method].flat()) {
      const key = `${m} ${route.url}`;
      if (seen.has(key) || !(METHODS as readonly string[]).includes(m)) continue;
      seen.add(key);
      router.on(m as (typeof METHODS)[number], route.url, () => undefined);
    }
  });

  const allowedMethods = (url: string): string[] => {
    const path = url.split('?')[0]!;
    const allowed: string[] = METHODS.filter((m) => router.find(m, path) !== null);
    return allowed.length ? [...allowed, 'OPTIONS'] : [];
  };

  app.setNotFoundHandler((request, reply) => {
    const allow = allowedMethods(request.url);
    // A route that exists for this method but found nothing (a static file that is not there) is a 404.
    const err =
      allow.length && !allow.includes(request.method)
        ? new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed here`, [], { Allow: allow.join(', ') })
        : new AppError('NOT_FOUND', 'No such resource');
    return sendAppError(reply, err, opts.clock.now());
  });

  // OPTIONS on a known path: 204 with Allow; a CORS preflight goes on to @fastify/cors (plugins/cors.ts),
  // which adds its Access-Control-* headers. Unknown path: 404. Every other method passes straight through
  // (a callback hook: no promise per request on the redirect's hot path).
  app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
    if (request.method !== 'OPTIONS') return done();
    const allow = allowedMethods(request.url);
    if (!allow.length) return done(new AppError('NOT_FOUND', 'No such resource'));
    request.allowedMethods = allow;
    reply.header('allow', allow.join(', '));
    const preflight =
      request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined;
    if (!preflight) {
      reply.code(204).header('cache-control', 'no-store').send();
      return;
    }
    done();
  });
}

export default fp(methodsPlugin, { name: 'ferry-methods' });
