import type { IncomingMessage } from 'node:http';
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { CounterReading, RedisTurn } from '../infra/redis-turn.js';
import { documentRateLimitHeaders, LOCAL_KEYS, WINDOW_MS } from './rate-limit.js';
import { rateLimited } from './rate-limit.headers.js';

/**
 * The redirect's own, higher limit per client IP (REDIRECT_RATE_LIMIT_PER_MINUTE, SPEC §8): one counter per
 * address, shared by the redirect route's hook and its fast path (modules/redirect/redirect-fast-path.ts).
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
   * For the fast path: counts a request from `ip` and, if it is admitted, records it (`record`: its click; null
   * for a HEAD); gives its RateLimit field, or null when it is past the limit — the route then answers the
   * 429. In process the answer is immediate and a request past the limit is not counted here (the route's hook
   * counts it). In Redis it comes with the turn's round trip (infra/redis-turn.ts: where the click stream
   * appends through the same turn, the click goes in that run, added only if the count admits it), and a
   * verdict past the limit is handed to the route's hook with the request, so the hook counts nothing more.
   */
  admit(req: IncomingMessage, ip: string, record: (() => void) | null): string | null | Promise<string | null>;
  /** the route's onRequest hook: counts, writes RateLimit-Policy and RateLimit, and answers 429 past the limit */
  readonly hook: onRequestHookHandler;
}

/** Registers `limiter` in the redirect's root-level context, before its routes. */
export function registerRedirectRateLimit(scope: FastifyInstance, limiter: RedirectLimiter): void {
  scope.addHook('onRequest', limiter.hook);
  scope.addHook('onRoute', documentRateLimitHeaders);
}

/** IPv4 needs no normalising; IPv6 is grouped per /64 as on every other limit. */
const addressKey = (ip: string): string => (ip.includes(':') ? normalizeIP(ip) : ip);
const windowSecondsOf = (windowMs: number): number => Math.ceil(windowMs / 1000);
const secondsLeft = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
const field = (name: string, remaining: number, reset: number): string => `"${name}";r=${remaining};t=${reset}`;
const tooMany = (name: string, max: number, windowMs: number, reset: number) =>
  rateLimited(name, max, windowSecondsOf(windowMs), reset);

/**
 * Counters in process, for the redirect's hot path: one Map lookup and no promise, without
 * @fastify/rate-limit's three awaits per request (bench/). The LOCAL_KEYS least recently seen addresses are kept.
 */
export class LocalIpLimiter implements RedirectLimiter {
  private readonly windows = new Map<string, { count: number; startedAt: number }>();
  readonly policy: string;

  constructor(
    readonly name: string,
    readonly max: number,
    private readonly windowMs = WINDOW_MS,
  ) {
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

  admit(_req: IncomingMessage, ip: string, record: (() => void) | null): string | null {
    const field = this.take(ip, true);
    if (field !== null) record?.();
    return field;
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

interface Verdict {
  allowed: boolean;
  /** the RateLimit field */
  field: string;
  /** seconds until the window resets (Retry-After past the limit) */
  reset: number;
}

/**
 * Counters in Redis (the scale-out setup), under the key @fastify/rate-limit's Redis store gives the same policy
 * (`<prefix>ratelimit:redirect:ip:<address>`, one INCR'd integer expiring with its window), so every instance
 * draws on one quota. Counted in the redirect's Redis turn (infra/redis-turn.ts): one script run per event-loop
 * turn for all of the turn's requests, whatever their number (an address's requests are one INCRBY, the n-th
 * request the n-th value of that increment); a fast-path GET's click goes in the same run, so the count and
 * the click cost one round trip. A failing or slow Redis (the turn's bound) fails open, as the API's limits do:
 * the request passes with the whole quota shown.
 */
export class SharedIpLimiter implements RedirectLimiter {
  readonly policy: string;
  private readonly keyPrefix: string;
  /** verdicts of requests the fast path took and hands to the route (past the limit), already counted */
  private readonly handed = new WeakMap<IncomingMessage, Verdict>();

  constructor(
    readonly name: string,
    readonly max: number,
    private readonly turn: RedisTurn,
    prefix: string,
    private readonly windowMs = WINDOW_MS,
  ) {
    this.policy = `"${name}";q=${max};w=${windowSecondsOf(windowMs)}`;
    this.keyPrefix = `${prefix}ratelimit:${name}:ip:`;
  }

  private readonly verdictOf = (reading: CounterReading | null): Verdict =>
    reading === null ? this.open() : this.verdictAt(reading.count, reading.ttlMs);

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

  admit(req: IncomingMessage, ip: string, record: (() => void) | null): Promise<string | null> {
    const key = this.keyPrefix + addressKey(ip);
    return new Promise((resolve) => {
      const done = (r: CounterReading | null): void => resolve(this.handOver(req, this.verdictOf(r)));
      if (record === null) this.turn.count(key, this.windowMs, done);
      else this.turn.admit(key, this.windowMs, this.max, record, done);
    });
  }

  readonly hook: onRequestHookHandler = (request, reply, done) => {
    if (request.method === 'OPTIONS') return done();
    const answer = (v: Verdict): void => {
      reply.header('ratelimit-policy', this.policy);
      reply.header('ratelimit', v.field);
      done(v.allowed ? undefined : tooMany(this.name, this.max, this.windowMs, v.reset));
    };
    const handed = this.handed.get(request.raw);
    if (handed === undefined)
      this.turn.count(this.keyPrefix + addressKey(request.ip), this.windowMs, (r) => answer(this.verdictOf(r)));
    else {
      this.handed.delete(request.raw);
      answer(handed);
    }
  };
}
