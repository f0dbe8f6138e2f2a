import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Clock } from '../lib/clock.js';

/**
 * Counts attempts per key in fixed windows, where only failed attempts should count (a link password:
 * modules/redirect/visit-policy.ts). An attempt is taken before it is tried, so concurrent attempts cannot
 * slip past the limit while the slow check runs, and handed back when it succeeded.
 */
export interface AttemptLimiter {
  /**
   * Counts `n` attempts (default 1) at once: null while they fit within the limit, otherwise the seconds until
   * the window ends (and none of them is counted).
   */
  take(key: string, n?: number): Promise<number | null>;
  /** Hands back an attempt that succeeded. */
  refund(key: string): Promise<void>;
}

export interface AttemptLimiterOptions {
  max: number;
  windowMs: number;
}

/** distinct keys remembered in memory (least recently used are forgotten first) */
const LOCAL_KEYS = 50_000;

export function createMemoryAttemptLimiter(opts: AttemptLimiterOptions & { clock: Clock }): AttemptLimiter {
  const windows = new Map<string, { count: number; startedAt: number }>();
  return {
    async take(key, n = 1) {
      const now = opts.clock.now();
      let w = windows.get(key);
      if (w === undefined || w.startedAt + opts.windowMs <= now) {
        w = { count: 0, startedAt: now };
        if (windows.size >= LOCAL_KEYS) windows.delete(windows.keys().next().value!);
      }
      windows.delete(key); // re-inserted: the Map's order is the order of last use
      windows.set(key, w);
      if (w.count + n > opts.max) return Math.max(1, Math.ceil((w.startedAt + opts.windowMs - now) / 1000));
      w.count += n;
      return null;
    },
    async refund(key) {
      const w = windows.get(key);
      if (w && w.count > 0) w.count -= 1;
    },
  };
}

// INCRBY and the window's expiry in one step; past the limit the attempts are not counted (the count stays).
const TAKE = `local n = redis.call('INCRBY', KEYS[1], ARGV[3])
if n == tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if n > tonumber(ARGV[2]) then redis.call('DECRBY', KEYS[1], ARGV[3]); return redis.call('PTTL', KEYS[1]) end
return -1`;
// Only while the window lives: a DECR on an expired key would start a window without an expiry.
const REFUND = `if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0`;

/**
 * Shared by every instance (scale-out). While Redis does not answer, the counting falls back to this
 * process's memory rather than letting every guess through (or refusing every visitor).
 */
export function createRedisAttemptLimiter(
  opts: AttemptLimiterOptions & { redis: Redis; prefix: string; clock: Clock; log: FastifyBaseLogger },
): AttemptLimiter {
  const local = createMemoryAttemptLimiter(opts);
  const fallback =
    <T>(what: string, run: () => Promise<T>) =>
    (err: unknown): Promise<T> => {
      opts.log.warn({ err }, `attempt limiter: Redis did not answer (${what}); counting in this process`);
      return run();
    };
  return {
    take: (key, n = 1) =>
      (opts.redis.eval(TAKE, 1, `${opts.prefix}${key}`, opts.windowMs, opts.max, n) as Promise<number>)
        .then((pttl) => (pttl < 0 ? null : Math.max(1, Math.ceil(pttl / 1000))))
        .catch(fallback('take', () => local.take(key, n))),
    refund: (key) =>
      (opts.redis.eval(REFUND, 1, `${opts.prefix}${key}`) as Promise<unknown>)
        .then(() => undefined)
        .catch(fallback('refund', () => local.refund(key))),
  };
}
