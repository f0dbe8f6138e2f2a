import type { Clock } from '../../lib/clock.js';
import type { LinkPreview } from '../links/index.js';

/**
 * What a visit must check before it is redirected (visit-policy.ts). null on a target: none of it, and the
 * fast path may answer the visit.
 */
export interface VisitRules {
  maxVisits: number | null;
  forwardQuery: boolean;
  passwordHash: string | null;
}

/** What a code resolves to on the redirect path. */
export type RedirectTarget =
  /** `code`: the link's code; `alias`: the alias visited (null: the code was) */
  | {
      kind: 'link';
      id: number;
      code: string;
      alias: string | null;
      url: string;
      expiresAt: number | null;
      rules: VisitRules | null;
      /** SPEC §21: what unfurlers are shown instead of the redirect; null: none (the fast path may answer) */
      preview: LinkPreview | null;
    }
  /** a tombstone of an expired link: 410 */
  | { kind: 'expired' }
  /** a link an admin disabled: 410 LINK_DISABLED */
  | { kind: 'disabled' }
  /** never issued, or deleted: 404 */
  | { kind: 'missing' };

export interface LinkCacheOptions {
  capacity: number;
  /**
   * how long an entry may be served without asking the database: across instances the change feed bounds
   * staleness to a second; this is the net under changes written past the API (an operator's SQL)
   */
  positiveTtlMs: number;
  negativeTtlMs: number;
}

/**
 * A code's key in the cache and in change messages: the code itself on the default domain (as before domains
 * existed), `code@domainId` on another (codes never contain `@`).
 */
export const linkCacheKey = (domainId: number, code: string): string => (domainId === 0 ? code : `${code}@${domainId}`);

export const DEFAULT_LINK_CACHE: LinkCacheOptions = { capacity: 100_000, positiveTtlMs: 30_000, negativeTtlMs: 5_000 };

interface Entry {
  target: RedirectTarget;
  until: number;
  /** read since it was (re)inserted: spared once by the eviction hand */
  used: boolean;
}

/**
 * The redirect's in-memory cache: bounded, holding hits and misses alike, so that a flood of unknown codes
 * does not become a flood of queries. Eviction approximates least-recently-used with the CLOCK algorithm: a
 * Map keeps insertion order, a hit only sets the entry's `used` flag, and when the cache is full the oldest
 * entries that were used since they were inserted are moved to the end (flag cleared) until one that was
 * not is evicted. (Moving every hit to the end, a true LRU, cost a Map delete and insert per redirect and,
 * with 100,000 entries, periodic rehashes of the whole table: visible in the redirect's p99.) Expiry is not cached away: a link entry carries
 * `expiresAt`, and the caller compares it with the clock on every hit.
 *
 * Within one process, writes invalidate explicitly (create, patch, delete, sweep). Across instances (PostgreSQL)
 * the change feed (infra/outbox-feed.ts) forgets changed codes and holds a gate: while it cannot vouch
 * that it has seen every change up to a moment ago, the cache answers nothing and every visit reads the
 * database. A lookup that started before an invalidation must not put its (possibly stale) answer back
 * afterwards: `epoch()` is taken before reading the database and `set` ignores answers from an older epoch.
 */
export class LinkCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  /** set by a change feed: false while it may have missed a change (then nothing is served from memory) */
  private trusted: (() => boolean) | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly options: LinkCacheOptions = DEFAULT_LINK_CACHE,
  ) {}

  get(code: string): RedirectTarget | undefined {
    if (this.trusted !== null && !this.trusted()) return undefined;
    const entry = this.entries.get(code);
    if (!entry) return undefined;
    if (entry.until <= this.clock.now()) {
      this.entries.delete(code);
      return undefined;
    }
    entry.used = true;
    return entry.target;
  }

  epoch(): number {
    return this.generation;
  }

  set(code: string, target: RedirectTarget, epochAtRead: number): void {
    if (epochAtRead !== this.generation) return;
    const ttl = target.kind === 'link' ? this.options.positiveTtlMs : this.options.negativeTtlMs;
    this.entries.delete(code);
    this.entries.set(code, { target, until: this.clock.now() + ttl, used: false });
    if (this.entries.size > this.options.capacity) this.evictOne();
  }

  private evictOne(): void {
    // Each pass clears one flag, so this ends within `capacity` steps (in practice within a few).
    for (const [code, entry] of this.entries) {
      this.entries.delete(code);
      if (!entry.used) return;
      entry.used = false;
      this.entries.set(code, entry);
    }
  }

  /** After a change this process made (other instances learn of it from the change feed). */
  invalidate(code: string): void {
    this.forget(code);
  }

  /** The links module's VisitCache: every name of a changed link, on its domain, before the change is answered. */
  forgetNames(domainId: number, names: readonly string[]): void {
    for (const name of names) this.invalidate(linkCacheKey(domainId, name));
  }

  /** Scale-out: entries are served only while `isTrusted()` says the change feed is current. */
  gate(isTrusted: () => boolean): void {
    this.trusted = isTrusted;
  }

  /** Drops an entry on this instance only (an invalidation received from another one). */
  forget(code: string): void {
    this.generation += 1;
    this.entries.delete(code);
  }

  /**
   * Drops every cached "missing" (codes were added elsewhere, an import's batch: whichever of them a visit
   * asked for before is now a link). One pass over the cache: announced once per batch, not per code.
   */
  forgetMisses(): void {
    this.generation += 1;
    for (const [code, entry] of this.entries) if (entry.target.kind === 'missing') this.entries.delete(code);
  }

  /** Drops every entry (the change feed may have missed invalidations while it was cut off). */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  size(): number {
    return this.entries.size;
  }
}
