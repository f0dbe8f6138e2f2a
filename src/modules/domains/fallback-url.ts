import {
  assertDestinationsAllowed,
  NOTHING_BLOCKED,
  type Destination,
  type HostBlocklist,
} from '../../lib/host-blocklist.js';

/**
 * Why a fallback URL (SPEC §19: root_redirect, not_found_redirect, expired_redirect) is refused, or null. An
 * absolute http(s) URL with a host and no credentials; not on the domain itself, where a missing code would
 * send the visitor round in a circle.
 */
export function checkFallbackUrl(raw: string, hostname: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL';
  if (url.hostname === '') return 'must have a host';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if ([...raw].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f))
    return 'must not contain whitespace or control characters';
  if (url.hostname.replace(/\.$/, '').toLowerCase() === hostname)
    return 'must not be on the domain itself (a visit would come back here)';
  return null;
}

/** The fields whose URL a visit on the domain is sent to. */
export const FALLBACK_FIELDS = ['root_redirect', 'not_found_redirect', 'expired_redirect', 'broken_redirect'] as const;
export type FallbackField = (typeof FALLBACK_FIELDS)[number];

type FallbackValues = Partial<Record<FallbackField, string | null | undefined>>;

/** The fallbacks among `values` that send visits to a URL (null and absent send none). */
export const fallbackDestinations = (values: FallbackValues): Destination[] =>
  FALLBACK_FIELDS.flatMap((field) => (typeof values[field] === 'string' ? [{ field, url: values[field] }] : []));

/**
 * SPEC §25: a fallback sends visits as a link does, so a blocked host is refused there too: 422
 * DESTINATION_BLOCKED naming each such field, once the fields passed checkFallbackUrl.
 */
export function assertFallbacksAllowed(values: FallbackValues, blockedHosts: HostBlocklist = NOTHING_BLOCKED): void {
  const message = 'Visits on this domain may not be sent to this host on this instance';
  assertDestinationsAllowed(blockedHosts, fallbackDestinations(values), message);
}
