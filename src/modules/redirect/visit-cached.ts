import type { CompiledRules } from '../links/index.js';
import type { DomainDirectory } from '../domains/index.js';
import { brokenFallback } from './broken-link.js';
import type { VisitRules } from './link-cache.js';
import type { RedirectResolver } from './redirect-resolver.js';
import { FALLBACK_STATUS, redirectTo, type Redirect } from './visit-redirect.js';
import type { createRouting, RoutedVisit } from './visit-routing.js';

/**
 * What the fast path may answer of a link's rules: null (none, or a forwarded query only: the fast path has no
 * query), the compiled routing rules, or undefined (a password or a visit limit: the route's).
 */
const fastRouting = (rules: VisitRules | null): CompiledRules | null | undefined =>
  rules === null ? null : rules.passwordHash !== null || rules.maxVisits !== null ? undefined : rules.routing;

interface CachedDecisionDeps {
  resolver: Pick<RedirectResolver, 'cached'>;
  domains: Pick<DomainDirectory, 'servedBy'>;
  /** REDIRECT_STATUS */
  status: number;
}

/**
 * The fast path's question (visit-policy.ts decideFromCache): the redirect of a GET or HEAD with no query, when
 * memory alone decides it — a cached live link with no password, no visit limit and no preview (whose answer
 * depends on the user agent); undefined for anything else, which the route decides. Without routing rules the
 * answer is the same for every visitor, made from the cached target. With rules (SPEC §21) their compiled form
 * is evaluated on `visitor`, which is read only then: one cache hit and the rules, as the route would.
 */
export function createCachedDecision(deps: CachedDecisionDeps, route: ReturnType<typeof createRouting>) {
  const { resolver, domains, status } = deps;
  return (
    host: string | undefined,
    name: string,
    method: string,
    visitor: () => RoutedVisit['context'],
  ): Redirect | undefined => {
    const domain = domains.servedBy(host);
    const target = resolver.cached(name, domain?.id ?? 0);
    if (target === undefined || target.kind !== 'link' || target.preview !== null) return undefined;
    const routing = fastRouting(target.rules);
    if (routing === undefined) return undefined;
    if (routing !== null) {
      // No query on the fast path: forward_query leaves the chosen URL as it is.
      const routed = route(target, routing, { name, method, query: '', context: visitor() });
      return redirectTo(routed.url, status, target, domain, routed);
    }
    // SPEC §24: a broken link's fallback, made per visit (the domain's broken_redirect may change under a cached
    // link; broken links are few), as the route makes it.
    const fallback = brokenFallback(target, domain, '');
    if (fallback !== null) return redirectTo(fallback, FALLBACK_STATUS, target, domain);
    // Made per visit, not memoised on the target: the cache makes a plain link's target per hit (link-cache.ts
    // Entry), and a memo kept beside 150,000 cached links cost 130 bytes of heap each (issue 37).
    return redirectTo(target.url, status, target, domain);
  };
}
