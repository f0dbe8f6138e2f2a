import { createRequire } from 'node:module';
import fastifyRateLimit, {
  normalizeIP,
  type FastifyRateLimitStore,
  type FastifyRateLimitStoreCtor,
} from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { bearerCredential, isApiKeyCredential } from './auth.js';
import { declareResponseHeaders } from './response-headers.js';
import { rateLimited, rateLimitHeaders, type LimitState } from './rate-limit.headers.js';

/**
 * Rate limits (SPEC §8) on @fastify/rate-limit's counters, with Ferry's own keys, headers and error.
 *
 * - `default`: every /api route, per caller: `user:<id>` when the request carries a bearer token with a valid
 *   signature, `key:<id>` for a real API key, `ip:<client ip>` otherwise (request.ip honours TRUST_PROXY; IPv6 is grouped per /64).
 * - `tokens-ip` and `tokens-username`: POST /api/v1/tokens (route config `rateLimitPreset: 'tokens'`), per client
 *   IP and per username (lower-cased) across IPs, so a password cannot be guessed from many addresses either.
 * - `redirect`: GET /{code}, per client IP: plugins/redirect-limit.ts.
 *
 * Why onRequest, with our own signature check, rather than preHandler after the route's auth hook: a limiter
 * that runs after authentication, body parsing and validation does not count the requests an attacker sends
 * most cheaply (bad tokens, junk bodies, 401s and 400s). The caller's key only needs to be unforgeable, not
 * current, so an HMAC check of the JWT (no database read) is enough; a revoked but well-signed token still
 * counts against its user, and anything else counts against the IP. The auth hook verifies the token again
 * (tens of microseconds) and does the revocation and account checks.
 *
 * Plugin headers are off: the plugin emits the superseded split fields; we emit the current draft's structured
 * `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers) on every limited response.
 */

/** Where counters live: in-process by default; an ioredis client shares them between instances (scale-out). */
export interface RateLimitStore {
  redis: Redis | null;
  /** prefix of the Redis keys (default `ferry:`) */
  keyPrefix?: string;
}

export interface Policy {
  /** the name in RateLimit-Policy / RateLimit */
  name: string;
  max: number;
  windowMs: number;
  /** the bucket of this request, or null when the policy does not apply to it */
  key(request: FastifyRequest): string | null | Promise<string | null>;
}

export type RateLimitHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** a named preset of extra limits for this route */
    rateLimitPreset?: 'tokens';
  }
  interface FastifyRequest {
    rateLimitStates: LimitState[] | null;
  }
}

export const WINDOW_MS = 60_000;
/** distinct keys remembered per limiter in memory (least recently used are forgotten first) */
export const LOCAL_KEYS = 50_000;

/** @fastify/rate-limit's own Redis store (one atomic script per count); its package exports no name for it. */
const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  key: string,
) => FastifyRateLimitStore;

/**
 * The plugin's Redis store with keys `<prefix>ratelimit:<policy>:<caller>`. The plugin's child store puts the
 * limiter's route (method and URL) before the key, and a limiter made by createRateLimit, as all of Ferry's
 * are, has none: `ratelimit:undefinedundefined-default:ip:…`. Ferry's keys name their policy already, and a
 * policy counts across routes, so one store serves every limiter.
 */
function policyKeyedRedisStore(redis: Redis, nameSpace: string): FastifyRateLimitStoreCtor {
  const counters = new RedisStore(false, false, redis, nameSpace);
  const store: FastifyRateLimitStore = {
    incr: (key, callback, timeWindow, max) => counters.incr(key, callback, timeWindow, max),
    child: () => store,
  };
  return function PolicyKeyedRedisStore() {
    return store;
  } as unknown as FastifyRateLimitStoreCtor;
}

async function ensureBase(scope: FastifyInstance, store: RateLimitStore): Promise<void> {
  if (!scope.hasRequestDecorator('rateLimitStates')) scope.decorateRequest('rateLimitStates', null);
  if (scope.hasDecorator('createRateLimit')) return;
  await scope.register(fastifyRateLimit, {
    global: false, // limits are attached by Ferry's hooks below, not by route config
    addHeaders: {
      'x-ratelimit-limit': false,
      'x-ratelimit-remaining': false,
      'x-ratelimit-reset': false,
      'retry-after': false,
    },
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    // A broken shared store must not take the API down with it: fail open and let the log show it.
    skipOnError: true,
    ...(store.redis ? { store: policyKeyedRedisStore(store.redis, `${store.keyPrefix ?? 'ferry:'}ratelimit:`) } : {}),
  });
}

/** A hook that counts the request against `policy`, writes the headers and throws 429 past the limit. */
export function createLimiter(scope: FastifyInstance, policy: Policy): RateLimitHook {
  const keys = new WeakMap<FastifyRequest, string>();
  const check = scope.createRateLimit({
    max: policy.max,
    timeWindow: policy.windowMs,
    keyGenerator: (req) => keys.get(req)!,
    cache: LOCAL_KEYS,
  } as Parameters<FastifyInstance['createRateLimit']>[0]);
  const windowSeconds = Math.ceil(policy.windowMs / 1000);

  return async function rateLimit(request, reply) {
    if (request.method === 'OPTIONS') return; // CORS preflights are answered by the browser, not the client
    const found = policy.key(request);
    const key = typeof found === 'string' || found === null ? found : await found;
    if (key === null) return;
    keys.set(request, `${policy.name}:${key}`);
    const result = await check(request);
    if (result.isAllowed) return;
    const state: LimitState = {
      policy: policy.name,
      quota: policy.max,
      window: windowSeconds,
      remaining: result.remaining,
      reset: Math.max(1, result.ttlInSeconds),
    };
    const states = (request.rateLimitStates ??= []);
    states.push(state);
    for (const [name, value] of Object.entries(rateLimitHeaders(states))) reply.header(name, value);
    if (result.isExceeded) {
      throw rateLimited(policy.name, policy.max, windowSeconds, state.reset);
    }
  };
}

const ipKey = (request: FastifyRequest): string => `ip:${normalizeIP(request.ip)}`;

/**
 * `user:<id>` for a bearer JWT with a valid signature and expiry, `key:<id>` for an API key that exists (each
 * key has its own budget, SPEC §14; `apiKeyId` is the auth plugin's memoised check, which the access hook then
 * reuses, so a key costs one lookup per request), `ip:<address>` otherwise.
 */
export function callerKey(
  verify: (token: string) => Promise<{ user_id: number }>,
  apiKeyId?: (request: FastifyRequest) => Promise<number | null>,
): Policy['key'] {
  const userOrIp = async (request: FastifyRequest, token: string): Promise<string> => {
    try {
      return `user:${(await verify(token)).user_id}`;
    } catch {
      return ipKey(request); // not a token of ours: the auth hook answers 401; the request counts against the address
    }
  };
  const keyOrIp = async (request: FastifyRequest): Promise<string> => {
    const id = await apiKeyId!(request).catch(() => null);
    return id === null ? ipKey(request) : `key:${id}`;
  };
  return (request) => {
    const token = bearerCredential(request.headers.authorization);
    if (!token) return ipKey(request);
    return apiKeyId && isApiKeyCredential(token) ? keyOrIp(request) : userOrIp(request, token);
  };
}

const usernameKey = (request: FastifyRequest): string | null => {
  const username = (request.body as { username?: unknown } | undefined)?.username;
  return typeof username === 'string' && username.length > 0 && username.length <= 254
    ? `username:${username.toLowerCase()}`
    : null;
};

function addRouteHook(route: RouteOptions, hook: 'onRequest' | 'preValidation', fn: RateLimitHook): void {
  const existing = route[hook];
  route[hook] = (existing === undefined ? [fn] : [existing, fn].flat()) as never;
}

export interface CallerLimitOptions {
  perMinute: number;
  /** the JWT signature check (modules/tokens/jwt.ts `verify`) */
  verifyToken: (token: string) => Promise<{ user_id: number }>;
  /** the API key a request carries, if it is a real one (plugins/auth.ts `authenticate`) */
  apiKeyId?: (request: FastifyRequest) => Promise<number | null>;
  store: RateLimitStore;
}

/**
 * The per-caller limit (`default`), made once at the root, so that whatever counts against it shares one
 * budget per caller: every /api route, and the OpenAPI document (SPEC §17: half a megabyte a request).
 */
export async function createCallerLimit(scope: FastifyInstance, opts: CallerLimitOptions): Promise<RateLimitHook> {
  await ensureBase(scope, opts.store);
  return createLimiter(scope, {
    name: 'default',
    max: opts.perMinute,
    windowMs: WINDOW_MS,
    key: callerKey(opts.verifyToken, opts.apiKeyId),
  });
}

export interface ApiRateLimitOptions {
  /** the per-caller limit (createCallerLimit) */
  perCaller: RateLimitHook;
  tokenPerMinute: number;
  store: RateLimitStore;
}

/** For the /api context: the per-caller limit on every route and the `tokens` preset. */
async function apiRateLimit(api: FastifyInstance, opts: ApiRateLimitOptions): Promise<void> {
  await ensureBase(api, opts.store);
  const { perCaller } = opts;
  const tokensByIp = createLimiter(api, {
    name: 'tokens-ip',
    max: opts.tokenPerMinute,
    windowMs: WINDOW_MS,
    key: ipKey,
  });
  // Needs the parsed body, so it runs at preValidation (before the password is checked).
  const tokensByUsername = createLimiter(api, {
    name: 'tokens-username',
    max: opts.tokenPerMinute,
    windowMs: WINDOW_MS,
    key: usernameKey,
  });

  api.addHook('onRequest', perCaller);
  api.addHook('onRoute', (route) => {
    if (route.config?.rateLimitPreset === 'tokens') {
      addRouteHook(route, 'onRequest', tokensByIp);
      addRouteHook(route, 'preValidation', tokensByUsername);
    }
    documentRateLimitHeaders(route);
  });
}

export default fp(apiRateLimit, { name: 'ferry-rate-limit' });

/** Declares the RateLimit fields on every 2xx–4xx response of a limited route in the OpenAPI document. */
export function documentRateLimitHeaders(route: RouteOptions): void {
  declareResponseHeaders(route, ['RateLimit', 'RateLimit-Policy'], (status) => /^[234]/.test(status));
}
