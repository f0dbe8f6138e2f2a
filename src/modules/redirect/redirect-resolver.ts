import type { Clock } from '../../lib/clock.js';
import { linkCacheKey, type LinkCache, type RedirectTarget } from './link-cache.js';
import type { CodeLookup, RedirectQueries } from './redirect.repository.js';
import { toTarget } from './redirect-target.js';

const EXPIRED: RedirectTarget = { kind: 'expired' };

export interface RedirectResolverDeps {
  queries: Pick<RedirectQueries, 'lookupCode'>;
  cache: Pick<LinkCache, 'get' | 'set' | 'epoch'>;
  clock: Clock;
}

/**
 * What a name on a domain resolves to: the cache answers synchronously; a miss asks the database once and
 * caches the answer, negative ones included. Expiry is judged here on every call against the clock, not by the
 * cache, so a link stops redirecting at its expires_at exactly, sweep or no sweep.
 */
export function createRedirectResolver(deps: RedirectResolverDeps) {
  const { queries, cache, clock } = deps;
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
