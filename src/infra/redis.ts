import { Redis } from 'ioredis';

/**
 * The shared Redis connection of the scale-out setup (REDIS_URL). Commands fail fast while the connection
 * is down (no offline queue, one retry per request) so that callers can degrade as documented instead of
 * hanging; ioredis reconnects by itself with a capped backoff.
 */
export function createRedis(url: string): Redis {
  return new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

export type { Redis };
