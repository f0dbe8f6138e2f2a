import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../infra/metrics.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** marks the redirect route for the redirect latency histogram (the url `/:code` is recognised anyway) */
    redirect?: boolean;
  }
}

/**
 * A route whose template (routeOptions.url) is this bare one counts as a redirect without the `redirect`
 * marker; Ferry's own redirect route carries the marker (its template also holds the code's pattern).
 */
const BARE_CODE_ROUTE_URL = '/:code';

/**
 * Request count and duration for every response, labelled by route template (never the raw URL, so the label
 * set stays bounded) and status. One onResponse hook at the root; Fastify's reply.elapsedTime is the time since
 * the request arrived, so no start hook is needed. Requests that matched no route share the label `unmatched`.
 */
async function requestMetricsPlugin(
  app: FastifyInstance,
  opts: { metrics: Pick<Metrics, 'observeRequest' | 'observeRedirect' | 'observeRedirectAbandoned'> },
): Promise<void> {
  const { metrics } = opts;
  const isRedirect = (request: FastifyRequest): boolean =>
    request.routeOptions.url === BARE_CODE_ROUTE_URL || request.routeOptions.config.redirect === true;
  // A callback hook, not an async one: no promise per response on the redirect's hot path.
  app.addHook('onResponse', (request, reply, done) => {
    const seconds = reply.elapsedTime / 1000;
    const route = request.routeOptions.url ?? 'unmatched';
    const method = request.method;
    metrics.observeRequest(method, route, reply.statusCode, seconds);
    if (isRedirect(request) && (method === 'GET' || method === 'HEAD')) {
      metrics.observeRedirect(reply.statusCode, seconds);
    }
    done();
  });
  // A visit whose client leaves while its answer waits (its click's durability, a password's hash) gets no
  // onResponse: counted here, so that answered visits plus abandoned ones account for every click recorded.
  app.addHook('onRequestAbort', (request, done) => {
    if (isRedirect(request)) metrics.observeRedirectAbandoned();
    done();
  });
}

export default fp(requestMetricsPlugin, { name: 'ferry-request-metrics' });
