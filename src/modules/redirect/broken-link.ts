import type { DomainEntry } from '../domains/index.js';
import type { RedirectTarget } from './link-cache.js';
import { withForwardedQuery } from './visit-query.js';

/**
 * SPEC §24: where a broken link's visit goes instead of its destination — the link's fallback_url, else its
 * domain's broken_redirect (with the visit's query when the link forwards it); null: not broken, or no fallback
 * (the destination all the same: nothing better is known). Only the destination is checked, so a visit that a
 * rule or a split sends to a URL of its own keeps its way (the policy asks only for the destination's visits).
 */
export function brokenFallback(
  target: Extract<RedirectTarget, { kind: 'link' }>,
  domain: Pick<DomainEntry, 'brokenRedirect'> | undefined,
  query: string,
): string | null {
  if (target.broken === null) return null;
  const url = target.broken.fallbackUrl ?? domain?.brokenRedirect ?? null;
  return url !== null && target.rules?.forwardQuery ? withForwardedQuery(url, query) : url;
}
