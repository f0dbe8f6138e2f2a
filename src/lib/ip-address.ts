import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * IP addresses as Ferry compares them: one canonical spelling per address, and the class of an address that
 * decides whether Ferry itself may connect to it (SPEC §22, §24, §25: webhooks, link checks and domain
 * verification never reach inside the operator's network unless allowed).
 *
 * An IPv4 address has IPv6 spellings that reach the same host: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
 * (`::a.b.c.d`, deprecated but still parsed) and the NAT64 well-known prefix (`64:ff9b::a.b.c.d`, RFC 6052).
 * Each is read as the IPv4 address it carries, so a rule written for `203.0.113.7` holds for all of them.
 */

/** The eight 16-bit groups of an IPv6 address (with or without brackets, with an embedded dotted IPv4 tail). */
function ipv6Groups(text: string): number[] | null {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (!isIPv6(bare)) return null;
  // A dotted IPv4 tail is two groups written another way.
  const v6 = bare.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_m, a: string, b: string, c: string, d: string) =>
      `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  if (!v6.includes('::')) return parse(v6);
  const [left, right] = v6.split('::') as [string, string];
  const l = parse(left);
  const r = parse(right);
  return [...l, ...new Array<number>(8 - l.length - r.length).fill(0), ...r];
}

const dottedOf = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/**
 * The IPv4 address an IPv6 address carries in one of the forms above, or null. `::` and `::1` are IPv6's own
 * unspecified and loopback addresses, not IPv4-compatible ones.
 */
export function embeddedIPv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (g === null) return null;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const [hi, lo] = [g[6]!, g[7]!];
  if (zeros(0, 5) && g[5] === 0xffff) return dottedOf(hi, lo);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dottedOf(hi, lo);
  if (zeros(0, 6) && hi !== 0) return dottedOf(hi, lo);
  return null;
}

/**
 * One spelling per address: an IPv4 address as dotted decimal (also when written in an IPv6 form above), an
 * IPv6 one in lower case without brackets or zone; null when `host` is no IP address literal.
 */
export function canonicalAddress(host: string): string | null {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(bare)) return bare;
  const g = ipv6Groups(bare);
  if (g === null) return null;
  // The WHATWG URL parser writes IPv6 as RFC 5952 does (lower case, the longest run of zeros as ::).
  return embeddedIPv4(bare) ?? new URL(`http://[${g.map((x) => x.toString(16)).join(':')}]/`).hostname.slice(1, -1);
}

/** What kind of address it is, for the rule "never connect inside unless allowed". */
export type AddressClass =
  'public' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'multicast' | 'unspecified' | 'reserved';

const ranges: Array<[AddressClass, BlockList]> = (() => {
  const table: Array<[AddressClass, Array<[string, number, 'ipv4' | 'ipv6']>]> = [
    [
      'unspecified',
      [
        ['0.0.0.0', 8, 'ipv4'],
        ['::', 128, 'ipv6'],
      ],
    ],
    [
      'loopback',
      [
        ['127.0.0.0', 8, 'ipv4'],
        ['::1', 128, 'ipv6'],
      ],
    ],
    [
      'private',
      [
        ['10.0.0.0', 8, 'ipv4'],
        ['172.16.0.0', 12, 'ipv4'],
        ['192.168.0.0', 16, 'ipv4'],
        ['fc00::', 7, 'ipv6'],
      ],
    ],
    [
      'link-local',
      [
        ['169.254.0.0', 16, 'ipv4'],
        ['fe80::', 10, 'ipv6'],
      ],
    ],
    ['cgnat', [['100.64.0.0', 10, 'ipv4']]],
    [
      'multicast',
      [
        ['224.0.0.0', 4, 'ipv4'],
        ['ff00::', 8, 'ipv6'],
      ],
    ],
    // IETF protocol assignments, benchmarking, the old site-local range, 240/4 and broadcast: nothing a
    // public service answers on.
    [
      'reserved',
      [
        ['192.0.0.0', 24, 'ipv4'],
        ['198.18.0.0', 15, 'ipv4'],
        ['240.0.0.0', 4, 'ipv4'],
        ['fec0::', 10, 'ipv6'],
      ],
    ],
  ];
  return table.map(([cls, subnets]) => {
    const list = new BlockList();
    for (const [net, prefix, type] of subnets) list.addSubnet(net, prefix, type);
    return [cls, list];
  });
})();

/** The class of an IP address (any spelling above); null when `address` is not one. */
export function classifyAddress(address: string): AddressClass | null {
  const canonical = canonicalAddress(address);
  if (canonical === null) return null;
  const type = isIPv4(canonical) ? 'ipv4' : 'ipv6';
  for (const [cls, list] of ranges) if (list.check(canonical, type)) return cls;
  return 'public';
}

/** Whether Ferry may connect to this address without an operator's explicit permission. */
export const isPublicAddress = (address: string): boolean => classifyAddress(address) === 'public';
