/**
 * What may be shortened (SPEC §6). The stored string is sent back verbatim as the redirect's `Location`, so
 * everything that could split or confuse a header, or send a browser somewhere other than where it looks
 * like it goes, is refused here, once, at creation.
 *
 * Decisions:
 * - Only absolute `http://` / `https://` URLs with a host. `javascript:`, `data:`, `file:`, scheme-relative
 *   and `http:/x` forms are refused.
 * - No control characters, no whitespace, no Unicode format characters (bidi overrides can make a URL read
 *   differently from how it resolves), no backslash (browsers read it as `/`, other parsers do not).
 * - No userinfo (`user:pass@`, or any `@` before the path): it leaks credentials and is the classic
 *   "http://trusted.com@evil.com" disguise.
 * - Never a URL of this service (same origin as PUBLIC_BASE_URL, loopback aliases included): a link to a
 *   short link can loop or hide the real target.
 * - Internationalised URLs are accepted and stored in their ASCII form (WHATWG serialisation: punycode host,
 *   percent-encoded path), because a `Location` header must be ASCII; `original_url` then shows that form.
 *   An ASCII URL is stored exactly as sent.
 * - Private or loopback targets are allowed: the browser follows a redirect, the server never fetches it.
 */
export const MAX_URL_LENGTH = 2048;

const FORBIDDEN_CHARS = /[\p{Cc}\p{Cf}\p{Z}\\]/u;
const ABSOLUTE_HTTP = /^https?:\/\/[^/?#]/i;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export type UrlCheck = { ok: true; url: string } | { ok: false; reason: string };

const sameService = (target: URL, base: URL): boolean => {
  if (target.origin === base.origin) return true;
  const port = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');
  return LOOPBACK_HOSTS.has(target.hostname) && LOOPBACK_HOSTS.has(base.hostname) && port(target) === port(base);
};

export function checkOriginalUrl(raw: string, publicBaseUrl: string): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters` };
  if (FORBIDDEN_CHARS.test(raw)) return { ok: false, reason: 'must not contain whitespace, control characters or backslashes' };
  if (!ABSOLUTE_HTTP.test(raw)) return { ok: false, reason: 'must be an absolute http or https URL with a host' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be a valid URL' };
  }
  const authority = raw.slice(raw.indexOf('//') + 2).split(/[/?#]/, 1)[0]!;
  if (authority.includes('@') || url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'must not contain credentials (user:password@)' };
  }
  if (url.hostname === '') return { ok: false, reason: 'must have a host' };
  if (sameService(url, new URL(publicBaseUrl))) return { ok: false, reason: "must not point at this service's own short links" };
  const stored = PRINTABLE_ASCII.test(raw) ? raw : url.href;
  if (stored.length > MAX_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters once encoded` };
  return { ok: true, url: stored };
}
