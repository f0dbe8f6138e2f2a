import type { IncomingMessage } from 'node:http';
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import { documentRateLimitHeaders, LOCAL_KEYS, WINDOW_MS } from './rate-limit.js';
import { rateLimited } from './rate-limit.headers.js';

/**
 * The redirect's own, higher limit per client IP (REDIRECT_RATE_LIMIT_PER_MINUTE, SPEC §8): one counter per
 * address, shared by the redirect route's hook and its fast path (modules/links/redirect-fast-path.ts).
 * In process (LocalIpLimiter) without Redis; in Redis (SharedIpLimiter) in the scale-out setup, so that
 * instances draw on one quota. Both keep the same fixed windows, keys, headers and 429 as the API's limits
 * (rate-limit.ts): a window opens at an address's first request and lasts a minute.
 */
export interface RedirectLimiter {
  readonly name: string;
  readonly max: number;
  /** the RateLimit-Policy field, the same for every answer */
  readonly policy: string;
  /**
   * For the fast path: counts a request from `ip` and gives its RateLimit field, or null when it is past the
   * limit — the route then answers the 429. In process the answer is immediate and a request past the limit
   * is not counted here (the route's hook counts it); in Redis it comes with the turn's round trip, and the
   * verdict is handed to the route's hook with the request, so the hook counts nothing more.
   */
  admit(req: IncomingMessage, ip: string): string | null | Promise<string | null>;
  /** the route's onRequest hook: counts, writes RateLimit-Policy and RateLimit, and answers 429 past the limit */
  readonly hook: onRequestHookHandler;
  /**
   * Counters in Redis only: the fast path may have a request counted in the same round trip as its click
   * (the click queue's enqueueCounted), instead of admit() and then the click.
   */
  readonly shared?: SharedCounter;
}

/** A request's counter in Redis, counted elsewhere (with its click), and its verdict from the reading. */
export interface SharedCounter {
  counterOf(ip: string): { key: string; max: number; windowMs: number };
  /**
   * The RateLimit field of a request counted at `reading` (null: Redis did not answer, the limit fails
   * open), or null when it is past the limit: the verdict is then handed to the route's hook, as admit() does.
   */
  verdict(req: IncomingMessage, reading: { count: number; ttlMs: number } | null): string | null;
}

/** Registers `limiter` (by default one in process) in the redirect's root-level context, before its routes. */
export function registerRedirectRateLimit(scope: FastifyInstance, opts: { perMinute: number; limiter?: RedirectLimiter }): void {
  scope.addHook('onRequest', (opts.limiter ?? new LocalIpLimiter('redirect', opts.perMinute)).hook);
  scope.addHook('onRoute', documentRateLimitHeaders);
}

/** IPv4 needs no normalising; IPv6 is grouped per /64 as on every other limit. */
const addressKey = (ip: string): string => (ip.includes(':') ? normalizeIP(ip) : ip);
const windowSecondsOf = (windowMs: number): number => Math.ceil(windowMs / 1000);
const secondsLeft = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
const field = (name: string, remaining: number, reset: number): string => `"${name}";r=${remaining};t=${reset}`;
const tooMany = (name: string, max: number, windowMs: number, reset: number) => rateLimited(name, max, windowSecondsOf(windowMs), reset);

/**
 * Counters in process, for the redirect's hot path: one Map lookup and no promise, without
 * @fastify/rate-limit's three awaits per request (bench/). The LOCAL_KEYS least recently seen addresses are kept.
 */
export class LocalIpLimiter implements RedirectLimiter {
  private readonly windows = new Map<string, { count: number; startedAt: number }>();
  readonly policy: string;

  constructor(readonly name: string, readonly max: number, private readonly windowMs = WINDOW_MS) {
    this.policy = `"${name}";q=${max};w=${windowSecondsOf(windowMs)}`;
  }

  /**
   * Counts a request from `ip` and returns the RateLimit field, or null past the limit. With `onlyIfAllowed`,
   * a request past the limit is not counted (the caller hands it to the hook, which counts and answers 429).
   */
  take(ip: string, onlyIfAllowed = false): string | null {
    const key = addressKey(ip);
    const now = Date.now();
    let w = this.windows.get(key);
    if (w === undefined || w.startedAt + this.windowMs <= now) {
      w = { count: 0, startedAt: now };
      if (this.windows.size >= LOCAL_KEYS) this.windows.delete(this.windows.keys().next().value!);
    } else {
      if (onlyIfAllowed && w.count >= this.max) return null;
      this.windows.delete(key); // re-inserted below: the Map's order is the order of last use
    }
    this.windows.set(key, w);
    w.count += 1;
    if (w.count > this.max) return null;
    return field(this.name, this.max - w.count, secondsLeft(w.startedAt + this.windowMs - now));
  }

  admit(_req: IncomingMessage, ip: string): string | null {
    return this.take(ip, true);
  }

  /** The onRequest hook (a callback hook: no promise per request). */
  readonly hook: onRequestHookHandler = (request, reply, done) => {
    if (request.method === 'OPTIONS') return done();
    const taken = this.take(request.ip);
    reply.header('ratelimit-policy', this.policy);
    if (taken !== null) {
      reply.header('ratelimit', taken);
      return done();
    }
    const w = this.windows.get(addressKey(request.ip))!;
    const reset = secondsLeft(w.startedAt + this.windowMs - Date.now());
    reply.header('ratelimit', field(this.name, 0, reset));
    done(tooMany(this.name, this.max, this.windowMs, reset));
  };
}

/** One address's counter after a turn's requests: INCRBY, and the window's expiry set when the key is new. */
const COUNT_SCRIPT = `
local n = tonumber(ARGV[1])
local current = redis.call('INCRBY', KEYS[1], n)
local ttl = redis.call('PTTL', KEYS[1])
if current == n or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {current, ttl}
`;

interface Verdict {
  allowed: boolean;
  /** the RateLimit field */
  field: string;
  /** seconds until the window resets (Retry-After past the limit) */
  reset: number;
}

type CountCommand = (key: string, n: number, windowMs: number) => Promise<[number, number]>;

/**
 * Counters in Redis (the scale-out setup), under the key @fastify/rate-limit's Redis store gives the same policy
 * (`<prefix>ratelimit:redirect:ip:<address>`, one INCR'd integer expiring with its window), so every instance
 * draws on one quota. One command per address per event-loop turn, whatever the number of requests from it
 * (INCRBY of the turn's count; the n-th request of the turn is the counter's n-th value of that increment): the
 * redirect waits for Redis anyway (its click's XADD, also sent once per turn), so the counting costs one more
 * round trip per turn, not a command per request. Where the click stream is in the same Redis, the fast path's
 * GETs are counted in their clicks' script run instead (`shared`; the click queue's enqueueCounted): one round
 * trip for both. A failing or slow Redis (the connection's command timeout) fails open, as the API's limits
 * do: the request passes with the whole quota shown.
 */
export class SharedIpLimiter implements RedirectLimiter {
  readonly policy: string;
  private readonly count: CountCommand;
  private readonly keyPrefix: string;
  /** the requests of this turn, by address key, waiting for their verdict */
  private waiting = new Map<string, ((v: Verdict) => void)[]>();
  /** verdicts of requests the fast path took and hands to the route (past the limit), already counted */
  private readonly handed = new WeakMap<IncomingMessage, Verdict>();

  /**
   * `countsWithClicks`: the click stream is in this same Redis, so a request may be counted in its click's
   * script run (`shared`); otherwise `shared` is absent and every request is counted here.
   */
  constructor(readonly name: string, readonly max: number, redis: Redis, prefix: string, countsWithClicks: boolean, private readonly windowMs = WINDOW_MS) {
    this.policy = `"${name}";q=${max};w=${windowSecondsOf(windowMs)}`;
    this.keyPrefix = `${prefix}ratelimit:${name}:ip:`;
    const commands = redis as unknown as { ferryCountTurn?: CountCommand };
    if (commands.ferryCountTurn === undefined) redis.defineCommand('ferryCountTurn', { numberOfKeys: 1, lua: COUNT_SCRIPT });
    this.count = commands.ferryCountTurn!.bind(redis);
    if (countsWithClicks) {
      this.shared = {
        counterOf: (ip) => ({ key: this.keyPrefix + addressKey(ip), max: this.max, windowMs: this.windowMs }),
        verdict: (req, reading) => this.handOver(req, reading === null ? this.open() : this.verdictAt(reading.count, reading.ttlMs)),
      };
    }
  }

  private verdictOf(ip: string): Promise<Verdict> {
    return new Promise((resolve) => {
      const key = addressKey(ip);
      const queued = this.waiting.get(key);
      if (queued !== undefined) return void queued.push(resolve);
      if (this.waiting.size === 0) setImmediate(this.sendTurn);
      this.waiting.set(key, [resolve]);
    });
  }

  private readonly sendTurn = (): void => {
    const turn = this.waiting;
    this.waiting = new Map();
    for (const [key, resolvers] of turn) {
      const n = resolvers.length;
      this.count(this.keyPrefix + key, n, this.windowMs).then(
        ([current, ttlMs]) => resolvers.forEach((resolve, i) => resolve(this.verdictAt(current - n + 1 + i, ttlMs))),
        () => {
          const open = this.open();
          for (const resolve of resolvers) resolve(open);
        },
      );
    }
  };

  private readonly verdictAt = (count: number, ttlMs: number): Verdict => {
    const reset = secondsLeft(ttlMs);
    return { allowed: count <= this.max, field: field(this.name, Math.max(0, this.max - count), reset), reset };
  };

  private readonly open = (): Verdict => ({ allowed: true, field: field(this.name, this.max, 1), reset: 1 });

  private readonly handOver = (req: IncomingMessage, v: Verdict): string | null => {
    if (v.allowed) return v.field;
    this.handed.set(req, v);
    return null;
  };

  admit(req: IncomingMessage, ip: string): Promise<string | null> {
    return this.verdictOf(ip).then((v) => this.handOver(req, v));
  }

  readonly shared?: SharedCounter;

  readonly hook: onRequestHookHandler = (request, reply, done) => {
    if (request.method === 'OPTIONS') return done();
    const answer = (v: Verdict): void => {
      reply.header('ratelimit-policy', this.policy);
      reply.header('ratelimit', v.field);
      done(v.allowed ? undefined : tooMany(this.name, this.max, this.windowMs, v.reset));
    };
    const handed = this.handed.get(request.raw);
    if (handed === undefined) void this.verdictOf(request.ip).then(answer);
    else {
      this.handed.delete(request.raw);
      answer(handed);
    }
  };
}
