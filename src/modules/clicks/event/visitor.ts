import { createHmac } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * What the redirect learns about a visitor, apart from the user agent (SPEC §15): the country, and — with
 * IP_ANONYMIZE — the shortened address and the visitor's daily hash. Pure functions.
 */
const DAY_MS = 86_400_000;

/**
 * A country code as a proxy sends it (Cloudflare's CF-IPCountry, a load balancer's geo header): two letters,
 * upper-cased; anything else — Cloudflare's XX (unknown) and T1 (Tor), a list, garbage — is no country.
 */
export function countryCode(value: string | string[] | undefined | null): string | null {
  if (typeof value !== 'string') return null;
  const code = value.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code) || code === 'XX' || code === 'T1') return null;
  return code;
}

function expandIPv6(ip: string): number[] | null {
  const [head, tail] = ip.split('::', 2) as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  let groups = part(head);
  let rest = part(tail);
  const last = (tail === undefined ? groups : rest).at(-1);
  // an embedded IPv4 (::ffff:1.2.3.4) is two groups
  if (last && isIPv4(last)) {
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    const v4 = [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
    if (tail === undefined) groups = [...groups.slice(0, -1), ...v4];
    else rest = [...rest.slice(0, -1), ...v4];
  }
  const missing = 8 - groups.length - rest.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  return [...groups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...rest].map((g) => parseInt(g, 16));
}

/**
 * IP_ANONYMIZE (SPEC §15): IPv4 keeps its /24 (`203.0.113.0`), IPv6 its /48 (`2001:db8:85a3::`); an
 * IPv4-mapped IPv6 address is treated as the IPv4 address it carries. Anything else is dropped (null).
 */
export function anonymizeIp(ip: string | null): string | null {
  if (!ip) return null;
  if (isIPv4(ip)) return ip.replace(/\.\d+$/, '.0');
  const bare = ip.split('%')[0]!;
  if (!isIPv6(bare)) return null;
  const groups = expandIPv6(bare.toLowerCase());
  if (!groups) return null;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.0`;
  }
  const prefix = groups.slice(0, 3);
  while (prefix.length > 0 && prefix.at(-1) === 0) prefix.pop();
  return `${prefix.map((g) => g.toString(16)).join(':')}::`;
}

/**
 * The visitor's identity for unique_visitors when addresses are anonymized: a keyed hash of the full address
 * and the UTC day, so the same person counts once per link and day, a raw address is never stored, and
 * yesterday's hash cannot be linked to today's. 34 characters (`h:` + 128 bits in hex): it fits the column
 * the addresses use.
 */
export function dailyVisitorHash(salt: Buffer, ip: string, at: number): string {
  const day = Math.floor(at / DAY_MS);
  return `h:${createHmac('sha256', salt).update(`${day}|${ip}`).digest('hex').slice(0, 32)}`;
}
