import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { Metrics } from '../../infra/metrics.js';
import { AppError } from '../../lib/app-error.js';
import { ErrorEnvelopeSchema, errorResponses, ref } from '../../lib/common.schemas.js';
import { exemptFromOverload } from '../../plugins/overload.js';
import { HealthSchema, ReadinessSchema } from './health.schemas.js';
import { requireMetricsToken, sharedRendering } from './metrics-access.js';
import type { ReadinessCheck } from '../../lib/readiness-check.js';
import { runChecks } from './readiness.js';
import { isDraining } from '../../infra/http-server.js';

export interface HealthRoutesOptions {
  checks: Record<string, ReadinessCheck>;
  /** the Redis click stream's backlog and live consumers, shown by /readyz (scale-out); null without it */
  clickStream?: () => { backlog: number; consumers: number } | null;
  metrics: Pick<Metrics, 'render'>;
  /** METRICS_TOKEN: /metrics needs it as a bearer token; null: /metrics is open */
  metricsToken?: string | null;
  /** a readiness check that takes longer than this has failed */
  checkTimeoutMs?: number;
  /** the click journal cannot write (SPEC §17: /readyz says `click_journal: degraded`); default: never */
  clickJournalDegraded?: () => boolean;
  /** EVENTS_URL's bus (SPEC §22: /readyz stays ready and says `events_bus: "down"`); null without EVENTS_URL */
  eventsBus?: () => 'up' | 'down' | null;
}

const NO_STORE = 'no-store';

/** Why this process itself is not ready, beside its dependencies: a shutdown, a click journal that cannot write. */
const processReasons = (
  shuttingDown: boolean,
  journalDegraded: boolean,
): Array<{ name: string; ok: false; message: string }> => [
  ...(shuttingDown ? [{ name: 'process', ok: false as const, message: 'shutting down' }] : []),
  ...(journalDegraded
    ? [
        {
          name: 'click_journal',
          ok: false as const,
          message: 'degraded: clicks are held in memory until the journal can write again',
        },
      ]
    : []),
];

/** Prometheus metrics, behind METRICS_TOKEN when it is set, rendered at most once a second. */
const metricsRoute: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, opts) => {
  const tags = ['operations'];
  const config = { ...exemptFromOverload };
  const render = sharedRendering(() => opts.metrics.render());
  app.get(
    '/metrics',
    {
      config,
      ...(opts.metricsToken ? { onRequest: requireMetricsToken(opts.metricsToken) } : {}),
      schema: {
        operationId: 'getMetrics',
        tags,
        security: [],
        summary: 'Prometheus metrics (text exposition format 0.0.4)',
        description:
          'Open unless METRICS_TOKEN is set; then it needs `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). Rendered at most once a second.',
        response: {
          200: {
            description:
              'Request counts and durations by route and status, redirect latency, click queue depth, flush lag and drops, database pool use, process metrics',
            content: { 'text/plain; version=0.0.4': { schema: Type.String() } },
          },
          401: {
            ...ref(ErrorEnvelopeSchema),
            description: 'UNAUTHENTICATED: METRICS_TOKEN is set and the request does not carry it as a bearer token',
          },
        },
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await render();
      return reply.header('cache-control', NO_STORE).type(contentType).send(body);
    },
  );
};

/** Liveness: the process is up and its event loop turns. */
const livenessRoute: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app) => {
  const tags = ['operations'];
  const config = { ...exemptFromOverload };
  app.get(
    '/healthz',
    {
      config,
      schema: {
        operationId: 'getHealth',
        tags,
        security: [],
        summary: 'Liveness: the process is up and its event loop turns',
        response: { 200: ref(HealthSchema) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', NO_STORE);
      return { status: 'ok' as const };
    },
  );
};

/**
 * Operational endpoints, in their own root-level context (no API hooks, no rate limit) and exempt from load
 * shedding: a probe must see the process as it is. SPEC §8.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, opts) => {
  const tags = ['operations'];
  const config = { ...exemptFromOverload };
  const checkTimeoutMs = opts.checkTimeoutMs ?? 2000;
  // From the first shutdown signal on (the drain of server.ts, then the close), readiness fails, so a balancer that still probes stops sending traffic.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });

  // Called, not registered: the routes stay in this context, in this order (the document's order).
  await livenessRoute(app, opts);

  app.get(
    '/readyz',
    {
      config,
      schema: {
        operationId: 'getReadiness',
        tags,
        security: [],
        summary: 'Readiness: the database answers and is fully migrated (and Redis, where used)',
        description:
          'A failing check answers 503 SERVICE_UNAVAILABLE with one `details` item per failing check (`field` names the check). ' +
          'The message bus (EVENTS_URL) is no check: while it is down the instance stays ready and says `events_bus: "down"`.',
        response: { 200: ref(ReadinessSchema), ...errorResponses(503) },
      },
    },
    async (request, reply) => {
      const results = await runChecks(opts.checks, checkTimeoutMs);
      const failed = results.filter((r) => !r.ok);
      failed.push(...processReasons(draining || isDraining(app.server), opts.clickJournalDegraded?.() === true));
      if (failed.length) {
        request.log.warn(
          { failed: failed.map((f) => ({ check: f.name, reason: f.message, err: f.cause })) },
          'not ready',
        );
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'The service is not ready',
          failed.map((f) => ({ field: f.name, message: f.message ?? 'failed' })),
          {
            'Retry-After': '5',
          },
        );
      }
      reply.header('cache-control', NO_STORE);
      const stream = opts.clickStream?.() ?? null;
      const bus = opts.eventsBus?.() ?? null;
      return {
        status: 'ok' as const,
        checks: Object.fromEntries(results.map((r) => [r.name, 'ok' as const])),
        ...(stream ? { click_stream: stream } : {}),
        ...(bus ? { events_bus: bus } : {}),
      };
    },
  );

  // Called, not registered: the routes stay in this context, in this order (the document's order).
  await metricsRoute(app, opts);
};
