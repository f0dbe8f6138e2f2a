import type { Clock } from '../../lib/clock.js';

/** What a code resolves to on the redirect path. */
export type RedirectTarget =
  | { kind: 'link'; id: number; code: string; url: string; expiresAt: number | null }
  /** a tombstone of an expired link: 410 */
  | { kind: 'expired' }
  /** never issued, or deleted: 404 */
  | { kind: 'missing' };

export interface LinkCacheOptions {
  capacity: number;
  /** how long an entry may be served without asking the database (bounds staleness across instances) */
  positiveTtlMs: number;
  negativeTtlMs: number;
}

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
 * Within one process, writes invalidate explicitly (create, delete, sweep). The TTLs bound how long another
 * instance may serve a stale entry in the scale-out setup. A lookup that started before an invalidation
 * must not put its (possibly stale) answer back afterwards: `epoch()` is taken before reading the database
 * and `set` ignores answers from an older epoch.
 */
export class LinkCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private broadcast: ((code: string) => void) | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly options: LinkCacheOptions = DEFAULT_LINK_CACHE,
  ) {}

  get(code: string): RedirectTarget | undefined {
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

  invalidate(code: string): void {
    this.forget(code);
    this.broadcast?.(code);
  }

  /** Scale-out: every invalidation is also sent to the other instances (infra/redis-link-cache-bus.ts). */
  onInvalidate(listener: (code: string) => void): void {
    this.broadcast = listener;
  }

  /** Drops an entry on this instance only (an invalidation received from another one). */
  forget(code: string): void {
    this.generation += 1;
    this.entries.delete(code);
  }

  /** Drops every entry (invalidations may have been missed while Redis was unreachable). */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  size(): number {
    return this.entries.size;
  }
}
