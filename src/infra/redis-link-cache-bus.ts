import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { closeRedis, logRedisConnection, whenRedisReady } from './redis.js';

/** What the bus needs of the redirect cache (modules/links/link-cache.ts). */
export interface InvalidatableCache {
  onInvalidate(listener: (code: string) => void): void;
  forget(code: string): void;
  clear(): void;
}

/**
 * Link-cache invalidation across instances (scale-out): every invalidation on one instance (create, delete,
 * expiry sweep) is published on `<prefix>link-cache`, and every other instance drops that code from its
 * redirect cache when the message arrives (about a millisecond on one network).
 *
 * Pub/sub is fire-and-forget, so the bound does not rest on it alone: a message published while this
 * instance's subscriber was disconnected is lost, so on every reconnection the whole cache is cleared; and
 * an entry is never served longer than the cache's TTL (30 s for a link, 5 s for a miss) anyway. Worst case,
 * then: a deleted link keeps redirecting on another instance for at most 30 s, and only while that
 * instance cannot reach Redis.
 */
export async function createRedisLinkCacheBus(opts: { redis: Redis; prefix: string; cache: InvalidatableCache; log: FastifyBaseLogger }) {
  const { redis, cache, log } = opts;
  const channel = `${opts.prefix}link-cache`;
  const self = randomBytes(8).toString('hex');
  // A subscribed connection can do nothing else: it gets its own.
  const subscriber = redis.duplicate();
  logRedisConnection(subscriber, log, 'link-cache-subscriber');
  let connectedBefore = false;
  let subscribed = false;
  const subscribe = (): Promise<void> =>
    subscriber.subscribe(channel).then(
      () => {
        subscribed = true; // from now on ioredis subscribes again by itself after a reconnection
      },
      (err: unknown) => log.warn({ err }, 'link-cache invalidation: subscribing failed; retried on the next connection'),
    );
  let first: Promise<void> | null = null;
  subscriber.on('ready', () => {
    if (connectedBefore) cache.clear(); // invalidations may have been missed while disconnected
    connectedBefore = true;
    if (!subscribed) first = subscribe();
  });
  subscriber.on('message', (_channel: string, message: string) => {
    const space = message.indexOf(' ');
    if (space > 0 && message.slice(0, space) !== self) cache.forget(message.slice(space + 1));
  });
  if (await whenRedisReady(subscriber)) await first;

  cache.onInvalidate((code) => {
    if (redis.status !== 'ready') return; // the other instances' TTL bounds it, and their reconnection clears them
    redis.publish(channel, `${self} ${code}`).catch((err: unknown) => log.warn({ err, code }, 'link-cache invalidation not published'));
  });

  return {
    async close(): Promise<void> {
      await closeRedis(subscriber);
    },
  };
}
