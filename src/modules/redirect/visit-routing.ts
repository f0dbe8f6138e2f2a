import type { Clock } from '../../lib/clock.js';
import { chooseVariant, firstMatch, RuleProbe, type CompiledRules, type RuleVisit } from '../links/index.js';

/** What routing reads of a visit (visit-policy.ts's Visit). */
export interface RoutedVisit {
  /** the code or alias in the path: the sticky cookie's Path */
  name: string;
  method: string;
  query: string;
  /** isBot: the user agent, a HEAD or a prefetch (visit-context.ts) */
  context: RuleVisit & { readonly cookie: string | undefined; readonly isBot: boolean };
}

/** What a link's rules chose for a visit (SPEC §21): the URL before forward_query, and what to record. */
export interface Routed {
  kind: 'routed';
  url: string;
  rule: string | null;
  variant: string | null;
  /** Set-Cookie of a sticky variant just assigned */
  cookie: string | null;
}

/** The sticky variant's cookie lives 30 days (SPEC §21). */
const VARIANT_COOKIE_MAX_AGE = 30 * 24 * 3600;
export const variantCookieName = (linkId: number): string => `ferry_v_${linkId}`;

/** A cookie's value in a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * A link's rules on the visit (SPEC §21), for the visit policy: the rule and the split's variant, and the sticky
 * cookie. Compiled rules come with the cached link (redirect-target.ts); a visit only evaluates them.
 *
 * The link's rules for one visit: the first enabled rule that matches, none → original_url. A split gives a
 * bot or a HEAD its first variant and no cookie; a sticky one keeps the variant a visitor's cookie names while
 * it exists (an unknown or forged one is ignored: drawn afresh, a new cookie).
 */
export function createRouting(deps: { clock?: Clock | undefined; random?: (() => number) | undefined }) {
  const now = deps.clock ? () => deps.clock!.now() : Date.now;
  const random = deps.random ?? Math.random;
  return (target: { id: number; url: string }, routing: CompiledRules, visit: RoutedVisit): Routed => {
    const rule = firstMatch(routing, new RuleProbe(visit.context, visit.query, now()));
    if (rule === null) return { kind: 'routed', url: target.url, rule: null, variant: null, cookie: null };
    const split = rule.target.split;
    if (split === null) return { kind: 'routed', url: rule.target.url!, rule: rule.id, variant: null, cookie: null };
    const routed = (v: { id: string; url: string }, cookie: string | null): Routed => ({
      kind: 'routed',
      url: v.url,
      rule: rule.id,
      variant: v.id,
      cookie,
    });
    if (visit.method === 'HEAD' || visit.context.isBot) return routed(split.variants[0]!, null);
    if (!split.sticky) return routed(chooseVariant(split, random() * 100), null);
    const name = variantCookieName(target.id);
    const kept = cookieValue(visit.context.cookie, name);
    const known = kept === null ? undefined : split.byId.get(kept);
    if (known !== undefined) return routed(known, null);
    const chosen = chooseVariant(split, random() * 100);
    return routed(
      chosen,
      `${name}=${chosen.id}; Path=/${visit.name}; Max-Age=${VARIANT_COOKIE_MAX_AGE}; HttpOnly; SameSite=Lax`,
    );
  };
}
