import { createHash, timingSafeEqual } from 'node:crypto';
import type { onRequestHookHandler } from 'fastify';
import { AppError } from '../../lib/app-error.js';
import type { Metrics } from '../../infra/metrics.js';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * METRICS_TOKEN (SPEC §17): `/metrics` answers only `Authorization: Bearer <token>`, compared in constant time
 * (over digests, so the length is not told either); anything else is 401 with a Bearer challenge.
 */
export function requireMetricsToken(token: string): onRequestHookHandler {
  const expected = digest(token);
  return function metricsToken(request, _reply, done) {
    const sent = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1];
    if (sent !== undefined && timingSafeEqual(digest(sent), expected)) return done();
    done(
      new AppError('UNAUTHENTICATED', 'GET /metrics needs the metrics token (METRICS_TOKEN) as a bearer token', [], {
        'WWW-Authenticate':
          sent === undefined ? 'Bearer realm="metrics"' : 'Bearer realm="metrics", error="invalid_token"',
      }),
    );
  };
}

/**
 * The exposition (about 190 KB) rendered once for every scrape that asks while a rendering is under way:
 * sixteen clients asking in a loop rendered it sixteen times over and slowed every other request down.
 */
export function sharedRendering(render: Metrics['render']): Metrics['render'] {
  let inFlight: ReturnType<Metrics['render']> | null = null;
  return () => {
    inFlight ??= render().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
}
