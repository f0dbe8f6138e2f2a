import type { Server } from 'node:http';
import { LogController, type FastifyHttpOptions, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import { createClientErrorHandler } from './infra/client-errors.js';
import { serverWithFastPath, type RawHandler } from './infra/http-server.js';
import type { Clock } from './lib/clock.js';
import { sendAppError, toAppError } from './plugins/errors.js';
import type { LazyCompilers } from './plugins/lazy-compilers.js';
import { badTargetError } from './plugins/request-target.js';
import { requestIdFrom } from './plugins/request-id.js';
import { rewriteVersionedUrl } from './plugins/versioning.js';

export interface FastifyOptionsDeps {
  config: Pick<Config, 'logLevel' | 'bodyLimitBytes' | 'trustProxy' | 'headersTimeoutMs' | 'requestTimeoutMs'>;
  clock: Clock;
  compilers: LazyCompilers;
  /** pino options or a logger instance (AppDeps) */
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyServerOptions['loggerInstance'];
  /** the redirect's fast path once its route and limiter exist (modules/redirect/redirect-fast-path.ts) */
  fastPath: () => RawHandler | null;
}

/**
 * TRUST_PROXY as Fastify takes it (docs/operating.md). `true`, addresses and CIDRs go as they are. A hop count
 * `n` trusts the n nearest hops: the connecting address and the n-1 next ones from the right of
 * X-Forwarded-For, so `1` makes the client the address the nearest proxy saw (the one left of the connecting
 * one). Fastify itself takes any number as "trust nothing" (a direct client could send the hops itself), so a
 * count is spelled out here as proxy-addr's trust function; a deployment where clients can reach the service
 * without the proxy names the proxy's addresses instead.
 */
export function trustedProxies(setting: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (typeof setting !== 'number') return setting;
  const hops = setting;
  return (_address: string, hop: number) => hop < hops;
}

/** The Fastify server options of the app: limits, timeouts, logging, request ids, and errors before routing. */
export function fastifyOptions(deps: FastifyOptionsDeps): FastifyHttpOptions<Server> {
  const { config, clock } = deps;
  return {
    schemaController: { compilersFactory: { buildSerializer: deps.compilers.serializerFactory } },
    serverFactory: serverWithFastPath(deps.fastPath) as FastifyHttpOptions<Server>['serverFactory'],
    ...(deps.loggerInstance
      ? { loggerInstance: deps.loggerInstance }
      : { logger: deps.logger ?? { level: config.logLevel } }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: trustedProxies(config.trustProxy),
    genReqId: requestIdFrom,
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      // A route may opt out of the per-request lines with `config: { accessLog: false }` (the redirect does).
      disableRequestLogging: (req: object) =>
        (req as { routeOptions?: { config?: { accessLog?: boolean } } }).routeOptions?.config?.accessLog === false,
    }),
    // Slow-loris protection: headers must arrive within HEADERS_TIMEOUT_MS (10 s) and the whole request within
    // REQUEST_TIMEOUT_MS (30 s), checked every few seconds (Node's default check runs every 30 s); a socket
    // with no traffic for 60 s is closed; idle keep-alive sockets close after 5 s.
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(5_000, config.headersTimeoutMs),
    },
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: 5_000,
    connectionTimeout: 60_000,
    // While closing, requests that still arrive on open connections are served (with Connection: close) rather
    // than answered by Fastify's own 503, whose body is not the error envelope; server.ts bounds the drain.
    return503OnClosing: false,
    routerOptions: { maxParamLength: 256 },
    // Avvio's 10 s default per plugin is a start-up race on a loaded 2-core machine (three apps migrating at once
    // timed out in 'ferry-openapi'); a plugin that truly hangs still fails, after a minute.
    pluginTimeout: 60_000,
    rewriteUrl: rewriteVersionedUrl,
    clientErrorHandler: createClientErrorHandler(clock.now),
    // Errors raised before routing (a malformed URL) still leave as the envelope, with their request id.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      sendAppError(reply, badTargetError(request.raw) ?? toAppError(error), clock.now());
    },
  };
}
