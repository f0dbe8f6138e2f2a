import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import type * as IoRedis from 'ioredis';
import type { Redis } from 'ioredis';

/**
 * The shared Redis connection of the scale-out setup (REDIS_URL). Commands fail at once while the connection
 * is down (no offline queue; a command in flight when it drops is retried once) and none waits longer than
 * COMMAND_TIMEOUT_MS for an answer, so that callers degrade as documented (docs/deployment.md) instead of
 * hanging; ioredis reconnects by itself with a capped backoff.
 *
 * Measured with an offline queue (the earlier setting): while Redis was down every rate-limited request
 * waited 1–2.6 s for its counter command to give up before failing open.
 */
const COMMAND_TIMEOUT_MS = 1_000;

export function createRedis(url: string): Redis {
  // Loaded by the first connection (ioredis is CommonJS): without REDIS_URL a start never loads it (about 80 ms of CPU).
  const { Redis: Client } = createRequire(import.meta.url)('ioredis') as typeof IoRedis;
  return new Client(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

/**
 * Resolves when the client is connected, or after `ms` (a Redis that is down at start-up must not keep the
 * service from starting: the features that use it degrade until it is back).
 */
export async function whenRedisReady(redis: Redis, ms = 2_000): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    timer.unref();
    redis.once('ready', onReady);
  });
}

const ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * Logs a connection's losses and recoveries (at most one error line per 10 s while it stays down). Without an
 * 'error' listener ioredis would print every failed reconnection attempt to the console.
 */
export function logRedisConnection(redis: Redis, log: FastifyBaseLogger, name: string): void {
  let down = false;
  let lastErrorLog = Number.NEGATIVE_INFINITY;
  redis.on('error', (err: Error) => {
    const now = Date.now();
    if (now - lastErrorLog < ERROR_LOG_INTERVAL_MS) return;
    lastErrorLog = now;
    log.error({ err: { message: err.message }, connection: name }, 'redis connection error');
  });
  redis.on('reconnecting', () => {
    if (!down) log.warn({ connection: name }, 'redis connection lost; features that use it degrade until it is back');
    down = true;
  });
  redis.on('ready', () => {
    if (down) log.info({ connection: name }, 'redis connection restored');
    down = false;
  });
}

/** quit() when connected (pending replies arrive first), disconnect() otherwise (quit would fail at once). */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') {
    await redis.quit().catch(() => redis.disconnect());
    return;
  }
  redis.disconnect();
}

export type { Redis };
