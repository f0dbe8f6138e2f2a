import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/app-error.js';
import type { Clock } from '../lib/clock.js';
import { sendAppError } from './errors.js';

/**
 * Load shedding and maintenance mode (SPEC §8), at the root so they cover every context:
 *
 * - Overload: @fastify/under-pressure samples event-loop delay, event-loop utilisation and heap every
 *   `sampleIntervalMs`; while one is past its bound (0 disables a bound) every request is answered 503
 *   SERVICE_UNAVAILABLE with Retry-After before any work is done for it. Routes whose config spreads
 *   `exemptFromOverload` (health, readiness, metrics) keep answering, so probes and dashboards see the truth.
 * - Maintenance (`MAINTENANCE_MODE=true`): the JSON API (`/api`, `/api/...`) answers 503; the redirect, health and
 *   docs keep working. The hook is only installed when the mode is on, so it costs the redirect nothing.
 *
 * The 503 is sent from the hook (not thrown), so shedding load does not also write an error log line per
 * rejected request; the request log still records each one.
 */
export interface OverloadOptions {
  maxEventLoopDelayMs: number;
  maxEventLoopUtilization: number;
  maxHeapUsedBytes: number;
  sampleIntervalMs: number;
  maintenanceMode: boolean;
  clock: Clock;
  /** called once per shed request with the bound that was exceeded (metrics) */
  onShed?: (reason: string) => void;
}

export const OVERLOAD_RETRY_AFTER_SECONDS = 5;
export const MAINTENANCE_RETRY_AFTER_SECONDS = 60;

/** Route config for endpoints that must answer even under pressure: `config: { ...exemptFromOverload }`. */
export const exemptFromOverload = { pressureHandler: (): undefined => undefined };

declare module 'fastify' {
  interface FastifyContextConfig {
    pressureHandler?: (
      request: FastifyRequest,
      reply: FastifyReply,
      type: string,
      value: number | undefined,
    ) => Promise<void> | void;
  }
  interface FastifyInstance {
    /** Whether a request arriving now would be shed (a bound is exceeded and the guard is armed). */
    shedding(): boolean;
  }
}

export const isApiPath = (url: string): boolean => url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');

async function overloadPlugin(app: FastifyInstance, opts: OverloadOptions): Promise<void> {
  const answer503 = async (reply: FastifyReply, err: AppError): Promise<void> => {
    // Awaiting the reply (a thenable) holds the hook chain until the response is written; nothing else runs.
    await sendAppError(reply, err, opts.clock.now());
  };

  // The first sample after start-up measures the start-up itself (schema compilation blocks the loop for most of
  // a second), so shedding is armed only once two clean samples have been taken after the app is ready.
  let armed = false;
  let arming: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    arming = setTimeout(() => {
      armed = true;
    }, 2 * opts.sampleIntervalMs);
    arming.unref();
  });
  app.addHook('onClose', async () => clearTimeout(arming));

  await app.register(underPressure, {
    maxEventLoopDelay: opts.maxEventLoopDelayMs,
    maxEventLoopUtilization: opts.maxEventLoopUtilization,
    // 'interval': utilisation over the last sample, not since the process started.
    eventLoopUtilizationMode: 'interval',
    maxHeapUsedBytes: opts.maxHeapUsedBytes,
    sampleInterval: opts.sampleIntervalMs,
    pressureHandler: (_request, reply, type) => {
      if (!armed) return;
      opts.onShed?.(type);
      return answer503(
        reply,
        new AppError('SERVICE_UNAVAILABLE', 'The service is overloaded; retry later', [], {
          'Retry-After': String(OVERLOAD_RETRY_AFTER_SECONDS),
        }),
      );
    },
  });

  // For answers given outside Fastify's hooks (the redirect's fast path): the same verdict as the hook's.
  app.decorate('shedding', () => armed && app.isUnderPressure());

  if (opts.maintenanceMode) {
    const maintenance = new AppError('SERVICE_UNAVAILABLE', 'The API is down for maintenance; retry later', [], {
      'Retry-After': String(MAINTENANCE_RETRY_AFTER_SECONDS),
    });
    app.addHook('onRequest', async (request, reply) => {
      if (isApiPath(request.url)) return answer503(reply, maintenance);
    });
  }
}

export default fp(overloadPlugin, { name: 'ferry-overload' });
