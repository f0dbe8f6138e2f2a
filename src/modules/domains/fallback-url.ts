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
  if ([...raw].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f)) return 'must not contain whitespace or control characters';
  if (url.hostname.replace(/\.$/, '').toLowerCase() === hostname) return 'must not be on the domain itself (a visit would come back here)';
  return null;
}
