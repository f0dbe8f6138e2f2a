import type { Clock } from '../../lib/clock.js';
import { linkCacheKey, parseLinkCacheKey, type LinkCache, type RedirectTarget } from './link-cache.js';
import type { CodeLookup, RedirectQueries } from './redirect.repository.js';
import { toTarget } from './redirect-target.js';

const EXPIRED: RedirectTarget = { kind: 'expired' };

export interface RedirectResolverDeps {
  queries: Pick<RedirectQueries, 'lookupCode' | 'lookupCodes'>;
  cache: Pick<LinkCache, 'get' | 'set' | 'epoch' | 'refreshWith'>;
  clock: Clock;
  /** runs the next background re-read (default: after REFRESH_DELAY_MS) */
  refreshAfter?: (read: () => void) => void;
}

/** Names per background re-read query. */
const REFRESH_BATCH = 500;
/**
 * How long the stale entries asked for are gathered before they are re-read (they are answered meanwhile: a
 * visit never waits for a re-read). Read at once, a busy instance's stale visits came one or two a turn and cost
 * a query each: 750 queries a second of 1.2 names in `redirect-redis` (issue 37), each compiled, sent and
 * answered on the cores the redirects use.
 */
const REFRESH_DELAY_MS = 100;

const afterDelay = (read: () => void): void => void setTimeout(read, REFRESH_DELAY_MS).unref();

/**
 * The cache's background re-read of stale entries (LinkCache.refreshWith): the keys asked for within
 * REFRESH_DELAY_MS are read together, one query per domain and REFRESH_BATCH names, one batch at a time (so a
 * stream of stale visits costs the database a few queries a second, not one per visit); each answer goes back
 * through `set` under the epoch taken before its query, so an invalidation that raced it wins.
 */
function createRefresher(deps: RedirectResolverDeps) {
  const { queries, cache } = deps;
  const later = deps.refreshAfter ?? afterDelay;
  let asked = new Set<string>();
  /** a read is due or running: keys asked meanwhile wait for the next */
  let due = false;

  async function readBatch(keys: string[]): Promise<void> {
    const byDomain = new Map<number, string[]>();
    for (const key of keys) {
      const { domainId, name } = parseLinkCacheKey(key);
      let names = byDomain.get(domainId);
      if (names === undefined) byDomain.set(domainId, (names = []));
      names.push(name);
    }
    for (const [domainId, names] of byDomain) {
      for (let i = 0; i < names.length; i += REFRESH_BATCH) {
        const part = names.slice(i, i + REFRESH_BATCH);
        const epoch = cache.epoch();
        const found = new Map((await queries.lookupCodes(part, domainId)).map((row) => [row.code, row]));
        for (const name of part) cache.set(linkCacheKey(domainId, name), toTarget(name, found.get(name)), epoch);
      }
    }
  }

  async function drain(): Promise<void> {
    const keys = [...asked];
    asked = new Set();
    // A failed re-read (the database unreachable) leaves the entries stale: a visit asks again after the
    // cache's patience, and past staleMs the visit reads the database itself (and answers 503 if it must).
    await readBatch(keys).catch(() => undefined);
    due = false;
    if (asked.size > 0) schedule();
  }

  function schedule(): void {
    due = true;
    later(() => void drain());
  }

  return (key: string): void => {
    asked.add(key);
    if (!due) schedule();
  };
}

/**
 * What a name on a domain resolves to: the cache answers synchronously; a miss asks the database once and
 * caches the answer, negative ones included. Expiry is judged here on every call against the clock, not by the
 * cache, so a link stops redirecting at its expires_at exactly, sweep or no sweep.
 */
export function createRedirectResolver(deps: RedirectResolverDeps) {
  const { queries, cache, clock } = deps;
  cache.refreshWith(createRefresher(deps));
  const checkExpiry = (t: RedirectTarget): RedirectTarget =>
    t.kind === 'link' && t.expiresAt !== null && t.expiresAt <= clock.now() ? EXPIRED : t;

  return {
    /** The cache's answer alone (the fast path): undefined on a miss, or while the change feed cannot vouch. */
    cached(name: string, domainId: number): RedirectTarget | undefined {
      const hit = cache.get(linkCacheKey(domainId, name));
      return hit === undefined ? undefined : checkExpiry(hit);
    },

    resolve(name: string, domainId: number): RedirectTarget | Promise<RedirectTarget> {
      // `name` may be an alias: one namespace, one lookup, one cache entry per name (SPEC §20).
      const key = linkCacheKey(domainId, name);
      const hit = cache.get(key);
      if (hit) return checkExpiry(hit);
      const epoch = cache.epoch();
      const found = queries.lookupCode(name, domainId);
      const store = (f: CodeLookup | undefined): RedirectTarget => {
        const target = toTarget(name, f);
        cache.set(key, target, epoch);
        return checkExpiry(target);
      };
      return found instanceof Promise ? found.then(store) : store(found);
    },
  };
}

export type RedirectResolver = ReturnType<typeof createRedirectResolver>;
