import type { DomainEntry } from '../domains/index.js';
import type { RedirectTarget } from './link-cache.js';
import { REDIRECT_CACHE_CONTROL } from './visit-preview.js';
import type { Routed } from './visit-routing.js';

export type LinkTarget = Extract<RedirectTarget, { kind: 'link' }>;

export type VisitDomain = Pick<
  DomainEntry,
  'id' | 'hostname' | 'scheme' | 'notFoundRedirect' | 'expiredRedirect' | 'rootRedirect' | 'brokenRedirect'
>;

/** A visit's redirect, whole: the route and the fast path write exactly this. */
export interface Redirect {
  kind: 'redirect';
  url: string;
  status: number;
  /** `set-cookie`: a split's sticky variant, given on the visit that assigned it (SPEC §21) */
  headers: { location: string; 'cache-control': string; 'set-cookie'?: string };
  /** the link followed, whose click is recorded (not for HEAD); null: a domain's fallback, which records none */
  link: LinkTarget | null;
  /** the verified domain the host named (SPEC §19); undefined: the default domain */
  domain: string | undefined;
  /** SPEC §21: the routing rule that chose the URL, and the A/B variant; null: none (the click records both) */
  rule: string | null;
  variant: string | null;
}

/** A domain's fallback is a temporary redirect: a link made later on that code must be reachable at once. */
export const FALLBACK_STATUS = 302;

/** A link's redirect or a domain's fallback, as the visit gets it. */
export function redirectTo(
  url: string,
  status: number,
  link: LinkTarget | null,
  domain: VisitDomain | undefined,
  routed?: Routed,
): Redirect {
  return {
    kind: 'redirect',
    url,
    status,
    headers:
      routed?.cookie == null
        ? { location: url, 'cache-control': REDIRECT_CACHE_CONTROL }
        : { location: url, 'cache-control': REDIRECT_CACHE_CONTROL, 'set-cookie': routed.cookie },
    link,
    domain: domain?.hostname,
    rule: routed?.rule ?? null,
    variant: routed?.variant ?? null,
  };
}
