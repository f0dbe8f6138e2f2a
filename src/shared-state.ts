import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import { fastStatements, type Storage } from './db/database.js';
import { createMemoryAttemptLimiter, createRedisAttemptLimiter, type AttemptLimiter } from './infra/attempt-limiter.js';
import { closeRedis, logRedisConnection, whenRedisReady, type Redis } from './infra/redis.js';
import { RedisTurn } from './infra/redis-turn.js';
import type { Clock } from './lib/clock.js';
import type { ReadinessCheck } from './lib/readiness-check.js';
import { redisReadiness } from './modules/health/index.js';
import { createRedisDenyList, createSqlDenyList, type TokenDenyList } from './modules/tokens/index.js';
import type { RateLimitStore } from './plugins/rate-limit.js';
import { LocalIpLimiter, SharedIpLimiter, type RedirectLimiter } from './plugins/redirect-limit.js';

/**
 * What instances share, and where it lives: the ONE place that decides Redis or not (docs/deployment.md).
 * With REDIS_URL: the token deny list, rate-limit counters (the redirect's too), link-password attempts and (through the clicks
 * module's pipeline, which gets `redis`) the click stream are in Redis, under REDIS_KEY_PREFIX. Without it:
 * the deny list in the database, the counters in this process.
 */
export interface SharedState {
  /** the scale-out Redis, or null; the clicks module chooses its stream from it */
  redis: Redis | null;
  redisPrefix: string;
  denyList: TokenDenyList;
  rateLimitStore: RateLimitStore;
  /** the redirect's per-address limit (REDIRECT_RATE_LIMIT_PER_MINUTE), in the rate-limit store */
  redirectLimiter: RedirectLimiter;
  /**
   * The redirect's Redis turn (infra/redis-turn.ts) on `redis`: the limit's counts and the click stream's
   * appends of one event-loop turn in one script run; null without Redis.
   */
  redirectTurn: RedisTurn | null;
  passwordAttempts: AttemptLimiter;
  /** password hashes per caller (PASSWORD_HASHES_PER_MINUTE, plugins/password-hash-budget.ts) */
  passwordHashBudget: AttemptLimiter;
  /** readiness checks the shared state adds (`redis`) */
  readiness: Record<string, ReadinessCheck>;
  /** Closes the connections opened here (after the modules: the click stream's last appends go through them). */
  close(): Promise<void>;
}

export interface SharedStateDeps {
  config: Pick<
    Config,
    'redisKeyPrefix' | 'linkPasswordAttemptsPerMinute' | 'redirectRateLimitPerMinute' | 'passwordHashesPerMinute'
  >;
  storage: Pick<Storage, 'db' | 'sqlite'>;
  redis: Redis | null;
  /** tests isolate their keys with a prefix of their own */
  redisPrefix?: string;
  /** another rate-limit store (tests) */
  rateLimitStore?: RateLimitStore;
  clock: Clock;
  log: FastifyBaseLogger;
}

export async function createSharedState(deps: SharedStateDeps): Promise<SharedState> {
  const { config, redis, clock, log } = deps;
  const redisPrefix = deps.redisPrefix ?? config.redisKeyPrefix;
  const attempts = { max: config.linkPasswordAttemptsPerMinute, windowMs: 60_000, clock };
  const hashes = { max: config.passwordHashesPerMinute, windowMs: 60_000, clock };
  let reachable = true;
  if (redis) {
    logRedisConnection(redis, log, 'main');
    // Bounded: a Redis that is down at start-up degrades its features instead of stopping the service.
    reachable = await whenRedisReady(redis);
    if (!reachable) log.warn('redis is not reachable at start-up; its features degrade until it is');
  }
  const rateLimitStore = deps.rateLimitStore ?? { redis, keyPrefix: redisPrefix };
  // One turn per client: where the limit's counters and the click stream share a Redis, they share its runs.
  const turns = new Map<Redis, RedisTurn>();
  const turnOf = (client: Redis): RedisTurn => {
    let turn = turns.get(client);
    if (turn === undefined) {
      turns.set(client, (turn = new RedisTurn(client)));
      logRedisConnection(turn.redis, log, 'redirect-turn');
    }
    return turn;
  };
  const redirectLimiter = rateLimitStore.redis
    ? new SharedIpLimiter(
        'redirect',
        config.redirectRateLimitPerMinute,
        turnOf(rateLimitStore.redis),
        rateLimitStore.keyPrefix ?? 'ferry:',
      )
    : new LocalIpLimiter('redirect', config.redirectRateLimitPerMinute);
  const redirectTurn = redis ? turnOf(redis) : null;
  // Its own connection, up before the first redirect (not waited for again when Redis is down).
  if (reachable) await Promise.all([...turns.values()].map((t) => whenRedisReady(t.redis)));
  return {
    redis,
    redisPrefix,
    denyList: redis
      ? createRedisDenyList(redis, clock.now, `${redisPrefix}revoked:`)
      : createSqlDenyList(deps.storage.db, fastStatements(deps.storage)),
    rateLimitStore,
    redirectLimiter,
    redirectTurn,
    passwordAttempts: redis
      ? createRedisAttemptLimiter({ redis, prefix: `${redisPrefix}link-password:`, ...attempts, log })
      : createMemoryAttemptLimiter(attempts),
    passwordHashBudget: redis
      ? createRedisAttemptLimiter({ redis, prefix: `${redisPrefix}password-hashes:`, ...hashes, log })
      : createMemoryAttemptLimiter(hashes),
    readiness: redis ? { redis: redisReadiness(redis) } : {},
    async close() {
      await Promise.all([...turns.values()].map((t) => closeRedis(t.redis)));
    },
  };
}
