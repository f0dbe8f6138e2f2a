import type { Clock } from '../../lib/clock.js';
import { Entry, entryBytes, isBare, isPlain, NamedEntry, NEVER, type RedirectTarget } from './link-cache-entry.js';

export type { RedirectTarget, VisitRules } from './link-cache-entry.js';
export {
  entryBytes,
  LINK_ENTRY_BYTES,
  MISS_ENTRY_BYTES,
  NAMED_LINK_BYTES,
  PLAIN_LINK_BYTES,
  ROUTING_BYTES_PER_JSON_CHAR,
} from './link-cache-entry.js';

export interface LinkCacheOptions {
  /** entries at most (LINK_CACHE_SIZE; 0: no cache) */
  capacity: number;
  /** the entries' estimated memory at most (LINK_CACHE_BYTES, entryBytes below; 0: no cache) */
  maxBytes: number;
  /**
   * how long an entry may be served without asking the database: across instances the change feed bounds
   * staleness to a second; this is the net under changes written past the API (an operator's SQL). Longer on
   * a large cache (reReadsPerSecond); each link entry gets a random share of it, between half and all
   */
  positiveTtlMs: number;
  /**
   * the net's background re-reads of link entries a second at most: a link entry's limit is the longer of
   * positiveTtlMs and twice the time this rate takes to re-read every entry cached (at 500: 30 s up to 7,500
   * entries, 400 s at 100,000), so that even a cache filled at once, all visited, is re-read at this rate
   * (on average two thirds of it); 3,300 re-reads a second cost one Redis instance a quarter of its redirects
   */
  reReadsPerSecond: number;
  negativeTtlMs: number;
  /**
   * how long past positiveTtlMs a link entry is still answered while it is re-read in the background (the
   * resolver's refresher): a visit never waits for that re-read; past it, the visit reads the database itself
   */
  staleMs: number;
}

/**
 * A code's key in the cache and in change messages: the code itself on the default domain (as before domains
 * existed), `code@domainId` on another (codes never contain `@`).
 */
export const linkCacheKey = (domainId: number, code: string): string => (domainId === 0 ? code : `${code}@${domainId}`);

export const DEFAULT_LINK_CACHE: LinkCacheOptions = {
  capacity: 1_000_000,
  maxBytes: 28 * 1024 * 1024,
  positiveTtlMs: 30_000,
  reReadsPerSecond: 500,
  negativeTtlMs: 5_000,
  staleMs: 120_000,
};

/** An exhausted hand's answer (LinkCache.evictOne). */
const DONE: IteratorResult<[string, Entry]> = { done: true, value: undefined };

/** A refresh asked for an entry is not asked again for this long (its answer is on the way, or was lost). */
const REFRESH_PATIENCE_MS = 5_000;

/** The (domain, name) of a cache key (linkCacheKey's inverse). */
export function parseLinkCacheKey(key: string): { domainId: number; name: string } {
  const at = key.lastIndexOf('@');
  return at < 0 ? { domainId: 0, name: key } : { domainId: Number(key.slice(at + 1)), name: key.slice(0, at) };
}

/**
 * The redirect's in-memory cache: bounded by entries and by their estimated bytes (entryBytes: a link with a
 * long URL costs more than one with a short one), holding hits and misses alike, so that a flood of unknown codes
 * does not become a flood of queries. Eviction approximates least-recently-used with the CLOCK algorithm: a
 * Map keeps insertion order, a hit only sets the entry's `used` flag, and when the cache is full the oldest
 * entries that were used since they were inserted are moved to the end (flag cleared) until one that was
 * not is evicted. (Moving every hit to the end, a true LRU, cost a Map delete and insert per redirect and,
 * with 100,000 entries, periodic rehashes of the whole table: visible in the redirect's p99.) Expiry is not
 * cached away: a link entry carries `expiresAt`, and the caller compares it with the clock on every hit.
 *
 * Within one process, writes invalidate explicitly (create, patch, delete, sweep). Across instances (PostgreSQL)
 * the change feed (infra/outbox-feed.ts) forgets changed codes and holds a gate: while it cannot vouch
 * that it has seen every change up to a moment ago, the cache answers nothing and every visit reads the
 * database. A lookup that started before an invalidation must not put its (possibly stale) answer back
 * afterwards: `epoch()` is taken before reading the database and `set` ignores answers from an older epoch.
 */
export class LinkCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * the CLOCK hand (evictOne), made at the first eviction: an iterator keeps the table it was made on, and every
   * table the Map has grown into since, until it is next advanced (V8 moves an iterator to a rehashed table
   * lazily), so one made with the empty cache held about a table's worth of obsolete ones while the cache filled
   * (37 bytes a cached link, bench/link-cache-bytes.ts)
   */
  private hand: MapIterator<[string, Entry]> | null = null;
  private generation = 0;
  /** the entries' entryBytes, summed */
  private total = 0;
  /** set by a change feed: false while it may have missed a change (then nothing is served from memory) */
  private trusted: (() => boolean) | null = null;
  /** set by the resolver: re-reads a stale link entry in the background (refreshWith) */
  private refresh: ((key: string) => void) | null = null;

  private readonly options: LinkCacheOptions;
  /** the clock's time when the cache was made: entries keep theirs relative to it (Entry) */
  private readonly base: number;

  /** `options`: DEFAULT_LINK_CACHE's where left out; `random`: the share of a link entry's limit it gets (linkTtlMs). */
  constructor(
    private readonly clock: Clock,
    options: Partial<LinkCacheOptions> = {},
    private readonly random: () => number = Math.random,
  ) {
    this.options = { ...DEFAULT_LINK_CACHE, ...options };
    this.base = clock.now();
  }

  get(code: string): RedirectTarget | undefined {
    if (this.trusted !== null && !this.trusted()) return undefined;
    const entry = this.entries.get(code);
    if (!entry) return undefined;
    const now = this.clock.now() - this.base;
    if (entry.until !== NEVER && entry.until <= now && !this.servesStale(code, entry, now)) {
      this.drop(code, entry);
      return undefined;
    }
    entry.used = true;
    return entry.target(code);
  }

  /**
   * Stale-while-revalidate for links (where entries have a time limit: scale-out): a link entry past its time
   * limit, by less than staleMs, is still answered, and its re-read is asked for once; the re-read's answer
   * replaces it. Without it, every visit to a link not visited within the limit (most of a large instance's
   * links) waited for a query (measured: `redirect-redis` in `npm run bench`, docs/performance.md).
   */
  private servesStale(code: string, entry: Entry, now: number): boolean {
    if (this.refresh === null || !entry.isLink() || now - entry.until >= this.options.staleMs) return false;
    if (now - entry.refreshAskedAt >= REFRESH_PATIENCE_MS) {
      entry.refreshAskedAt = now;
      this.refresh(code);
    }
    return true;
  }

  /** The resolver's background re-read of stale link entries (their answers come back through `set`). */
  refreshWith(refresh: (key: string) => void): void {
    this.refresh = refresh;
  }

  epoch(): number {
    return this.generation;
  }

  set(code: string, target: RedirectTarget, epochAtRead: number): void {
    if (epochAtRead !== this.generation) return;
    const { capacity, maxBytes } = this.options;
    const bytes = entryBytes(code, target);
    if (capacity <= 0 || bytes > maxBytes) return;
    const ttl = target.kind === 'link' ? this.linkTtlMs() : this.options.negativeTtlMs;
    const until = ttl === Infinity ? NEVER : Math.ceil(this.clock.now() - this.base + ttl);
    const old = this.entries.get(code);
    if (old !== undefined) this.drop(code, old);
    this.entries.set(code, this.entryOf(code, target, until, bytes));
    this.total += bytes;
    while (this.entries.size > capacity || this.total > maxBytes) this.evictOne();
  }

  /** A bare link as its URL and id (and code and alias: NamedEntry), anything else as its whole target. */
  private entryOf(key: string, target: RedirectTarget, until: number, bytes: number): Entry {
    if (target.kind !== 'link' || !isBare(target)) return new Entry(target, 0, until, bytes);
    if (isPlain(key, target)) return new Entry(target.url, target.id, until, bytes);
    // On the default domain an alias is the key itself: the entry keeps that one string.
    const alias = target.alias === key ? key : target.alias;
    return new NamedEntry(target.url, target.id, until, bytes, target.code, alias);
  }

  /** A new link entry's time limit (LinkCacheOptions.positiveTtlMs, reReadsPerSecond). */
  private linkTtlMs(): number {
    const { positiveTtlMs, reReadsPerSecond } = this.options;
    const limit = Math.max(positiveTtlMs, ((2 * this.entries.size) / reReadsPerSecond) * 1000);
    return limit * (0.5 + 0.5 * this.random()); // an infinite limit (the only writer) stays infinite
  }

  private evictOne(): void {
    // Each pass clears one flag, so this ends within `capacity` steps (in practice within a few). The hand is
    // one iterator kept between evictions: a fresh one started at the Map's first slot and stepped over every
    // slot deleted since its last rehash, up to the table's spare capacity (about 100 µs a miss with 150,000
    // entries, measured with a million-link mix of misses); a kept one sees entries moved to the end later.
    for (;;) {
      let next = this.hand === null ? DONE : this.hand.next();
      if (next.done === true) {
        this.hand = this.entries.entries();
        next = this.hand.next();
        if (next.done === true) return;
      }
      const [code, entry] = next.value;
      this.entries.delete(code);
      if (!entry.used) {
        this.total -= entry.bytes;
        return;
      }
      entry.used = false;
      this.entries.set(code, entry);
    }
  }

  private drop(code: string, entry: Entry): void {
    this.entries.delete(code);
    this.total -= entry.bytes;
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
    const entry = this.entries.get(code);
    if (entry !== undefined) this.drop(code, entry);
  }

  /**
   * Drops every cached "missing" (codes were added elsewhere, an import's batch: whichever of them a visit
   * asked for before is now a link). One pass over the cache: announced once per batch, not per code.
   */
  forgetMisses(): void {
    this.generation += 1;
    for (const [code, entry] of this.entries)
      if (typeof entry.value !== 'string' && entry.value.kind === 'missing') this.drop(code, entry);
  }

  /** Drops every entry (the change feed may have missed invalidations while it was cut off). */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
    this.hand = null;
    this.total = 0;
  }

  size(): number {
    return this.entries.size;
  }

  /** The entries' estimated heap cost (entryBytes), at most `maxBytes`. */
  bytes(): number {
    return this.total;
  }
}
