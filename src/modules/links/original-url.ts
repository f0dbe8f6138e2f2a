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
 * - Never a URL of this service (SPEC §12): a link to a short link can loop (each hop records a click) or
 *   hide the real target. Hosts are compared as the WHATWG parser normalises them (case, percent-encoding,
 *   IPv4 in any notation) and without a trailing dot. PUBLIC_BASE_URL's host is the service on its own port
 *   and, when that is a default port, on either scheme's default port (`http://host/` for an https base).
 *   Every loopback or unspecified spelling (`localhost` and `*.localhost`, 127.0.0.0/8, 0.0.0.0/8, `[::1]`,
 *   `[::]`, IPv4-mapped and -compatible IPv6 of those) is the service on the port it listens on and, when the
 *   base URL is itself such a host, on the base URL's port.
 * - Internationalised URLs are accepted and stored in their ASCII form (WHATWG serialisation: punycode host,
 *   percent-encoded path), because a `Location` header must be ASCII; `original_url` then shows that form.
 *   An ASCII URL is stored exactly as sent.
 * - Private or loopback targets are allowed: the browser follows a redirect, the server never fetches it.
 */
export const MAX_URL_LENGTH = 2048;

const FORBIDDEN_CHARS = /[\p{Cc}\p{Cf}\p{Z}\\]/u;
const ABSOLUTE_HTTP = /^https?:\/\/[^/?#]/i;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
export type UrlCheck = { ok: true; url: string } | { ok: false; reason: string };

const DEFAULT_PORTS = new Set(['80', '443']);
const portOf = (u: URL): string => u.port || (u.protocol === 'https:' ? '443' : '80');
/** A WHATWG-normalised hostname without its brackets (IPv6) or trailing dots. */
export const hostOf = (u: URL): string => u.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');

const loopbackV4 = (a: number): boolean => a === 127 || a === 0;

/** localhost names, 127.0.0.0/8, 0.0.0.0/8, ::1, ::, and IPv4-mapped (::ffff:) or -compatible (::) forms of those. */
export function isLocalHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const v4 = /^(\d{1,3})\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.exec(host);
  if (v4) return loopbackV4(Number(v4[1]));
  if (host === '::1' || host === '::') return true;
  // The parser writes an embedded IPv4 address as two hex groups: ::ffff:7f00:1 is ::ffff:127.0.0.1.
  const embedded = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  return embedded !== null && loopbackV4(parseInt(embedded[1]!, 16) >> 8);
}

/** Whether `target` is served by this service: see the decisions above. */
function sameService(target: URL, base: URL, listenPort: number | undefined): boolean {
  const [th, tp, bh, bp] = [hostOf(target), portOf(target), hostOf(base), portOf(base)];
  const samePort = tp === bp || (DEFAULT_PORTS.has(bp) && DEFAULT_PORTS.has(tp));
  if (th === bh && samePort) return true;
  if (!isLocalHost(th)) return false;
  return (isLocalHost(bh) && samePort) || (listenPort !== undefined && tp === String(listenPort));
}

/** `listenPort`: the port the service listens on (PORT), which any loopback spelling reaches. */
export function checkOriginalUrl(raw: string, publicBaseUrl: string, listenPort?: number): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters` };
  if (FORBIDDEN_CHARS.test(raw))
    return { ok: false, reason: 'must not contain whitespace, control characters or backslashes' };
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
  if (sameService(url, new URL(publicBaseUrl), listenPort))
    return { ok: false, reason: "must not point at this service's own short links" };
  const stored = PRINTABLE_ASCII.test(raw) ? raw : url.href;
  if (stored.length > MAX_URL_LENGTH)
    return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters once encoded` };
  return { ok: true, url: stored };
}
