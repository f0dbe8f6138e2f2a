import { isIP } from 'node:net';
import { AppError, type ErrorDetail } from './app-error.js';
import { canonicalAddress } from './ip-address.js';

/**
 * BLOCKED_HOSTS_FILE's rules (SPEC §18, §25): a name blocks itself and every subdomain, an address only
 * itself, and both match in every spelling of the host. Links and domains check their destinations here
 * (assertDestinationsAllowed), with the list the composition hands them; reading the file is
 * infra/blocked-hosts-file.ts.
 */
export interface HostBlocklist {
  /** whether a destination on this host (any spelling: as a URL parser wrote it, or as a person typed it) is refused */
  isBlocked(host: string): boolean;
}

export const NOTHING_BLOCKED: HostBlocklist = { isBlocked: () => false };

/**
 * One spelling per host, the one both the list and the hosts checked against it are brought to: an IP
 * address as canonicalAddress writes it (so `[::ffff:203.0.113.7]`, `[64:ff9b::cb00:7107]` and `0xcb.0x71.7`'s
 * parse `203.113.0.7` each read as the IPv4 address they are), a name as the WHATWG URL parser writes it (lower
 * case, punycode, numeric IPv4 forms read as addresses) without its trailing dots. Null when it is no host.
 */
export function canonicalHost(text: string): string | null {
  const bare = text.trim().replace(/\.+$/, '');
  if (bare === '') return null;
  const address = canonicalAddress(bare);
  if (address !== null) return address;
  if (/[/?#@:\s\\[\]]/.test(bare)) return null;
  let host: string;
  try {
    host = new URL(`http://${bare}/`).hostname;
  } catch {
    return null;
  }
  return canonicalAddress(host) ?? host.replace(/\.+$/, '');
}

export interface ParsedHosts {
  hosts: Set<string>;
  /** lines that name no host, with their line number (1-based) */
  problems: Array<{ line: number; text: string }>;
}

/** The file's text: one name or address a line (`*.` before a name means the name), `#` comments. */
export function parseBlockedHosts(text: string): ParsedHosts {
  const hosts = new Set<string>();
  const problems: ParsedHosts['problems'] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const name = raw.replace(/#.*/, '').trim();
    if (name === '') return;
    const host = canonicalHost(name.replace(/^\*\./, ''));
    if (host === null) problems.push({ line: i + 1, text: name.slice(0, 100) });
    else hosts.add(host);
  });
  return { hosts, problems };
}

/** Whether `host` (any spelling) or one of its parent domains is in `hosts` (canonical); an IP address only matches itself. */
export function matchesBlocked(hosts: ReadonlySet<string>, host: string): boolean {
  if (hosts.size === 0) return false;
  let h = canonicalHost(host);
  if (h === null) return false;
  if (isIP(h) !== 0) return hosts.has(h);
  if (hosts.has(h)) return true;
  // Its parent domains; a listed address is no parent of anything.
  for (let dot = h.indexOf('.'); dot !== -1; dot = h.indexOf('.')) {
    h = h.slice(dot + 1);
    if (hosts.has(h) && isIP(h) === 0) return true;
  }
  return false;
}

/** A destination a visit may be sent to, as the field that names it. */
export interface Destination {
  field: string;
  url: string;
}

/**
 * The one check of SPEC §25's "blocked hosts are blocked everywhere a visit can be sent": 422
 * DESTINATION_BLOCKED naming every field whose URL's host the list blocks. Callers run it once their fields
 * passed the rules of their shape (a URL that does not parse is theirs to refuse, and is passed over here).
 */
export function assertDestinationsAllowed(
  list: HostBlocklist,
  destinations: readonly Destination[],
  message = 'Visits may not be sent to this host on this instance',
): void {
  const details: ErrorDetail[] = [];
  for (const { field, url } of destinations) {
    let host: string;
    try {
      host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');
    } catch {
      continue;
    }
    if (list.isBlocked(host)) details.push({ field, message: `points at ${host}, which this instance blocks` });
  }
  if (details.length > 0) throw new AppError('DESTINATION_BLOCKED', message, details);
}
