import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress } from '../lib/ip-address.js';
import { describeError, OutboundError } from './outbound-error.js';

/** Every address a name resolves to (A and AAAA); rejects with an OutboundError. `signal` ends the lookup. */
export type ResolveHost = (hostname: string, signal: AbortSignal) => Promise<string[]>;

/** The answers that mean "this name has no such record", as opposed to "DNS did not answer". */
const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND']);

const codeOf = (err: unknown): string => (err as { code?: string }).code ?? 'error';

/**
 * Names resolved through DNS_SERVERS (`host[:port]` entries), or the system's resolvers when there are none,
 * as domain verification's TXT lookups are: A and AAAA asked together, every answer kept, because every
 * address a name has is checked before one is used (a name with one public and one private address is
 * refused). A resolver per lookup, so that the deadline can cancel its queries without touching others'.
 */
export function createHostResolver(opts: { dnsServers: readonly string[]; timeoutMs?: number }): ResolveHost {
  return async (hostname, signal) => {
    const resolver = new Resolver({ timeout: opts.timeoutMs ?? 3_000, tries: 2 });
    if (opts.dnsServers.length) resolver.setServers([...opts.dnsServers]);
    const cancel = () => resolver.cancel();
    signal.addEventListener('abort', cancel, { once: true });
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value : []),
        ...(v6.status === 'fulfilled' ? v6.value : []),
      ];
      if (addresses.length) return addresses;
      const errors = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      const detail = `${hostname}: ${errors.map(describeError).join('; ') || 'no A or AAAA record'}`;
      throw new OutboundError(errors.every((e) => NO_RECORD.has(codeOf(e))) ? 'no-address' : 'dns-failed', detail);
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  };
}

/** The address a URL's host is written as (`[::1]` → `::1`), or null for a name. */
export function literalAddress(host: string): string | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isIP(bare) ? bare : null;
}

/**
 * The one address to connect to, after EVERY address was checked: loopback, private, link-local, CGNAT,
 * multicast, unspecified and reserved ones (in any IPv6 spelling of an IPv4 address) are refused unless the
 * operator allowed them. The first IPv4 address is taken, else the first IPv6 one.
 */
export function checkedAddress(hostname: string, addresses: readonly string[], allowPrivate: boolean): string {
  if (!allowPrivate) {
    const refused = addresses.flatMap((a) => {
      const cls = classifyAddress(a) ?? 'reserved';
      return cls === 'public' ? [] : [`${a} (${cls})`];
    });
    if (refused.length) throw new OutboundError('address-not-allowed', `${hostname} resolves to ${refused.join(', ')}`);
  }
  const chosen = addresses.find((a) => isIP(a) === 4) ?? addresses[0];
  if (chosen === undefined) throw new OutboundError('no-address', `${hostname}: no address`);
  return chosen;
}
