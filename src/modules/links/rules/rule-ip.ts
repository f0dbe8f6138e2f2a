import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { canonicalAddress } from '../../../lib/ip-address.js';

/** An `ip` condition's value: an address or a CIDR, v4 or v6 (an IPv4 address in an IPv6 form is read as IPv4). */
export interface IpRange {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

export function parseIpRange(value: string): IpRange | null {
  const slash = value.indexOf('/');
  const written = slash === -1 ? value : value.slice(0, slash);
  const prefixText = slash === -1 ? null : value.slice(slash + 1);
  if (!isIPv4(written) && !isIPv6(written)) return null;
  const address = canonicalAddress(written);
  if (address === null) return null;
  const family = isIPv4(address) ? 'ipv4' : 'ipv6';
  const bits = family === 'ipv4' ? 32 : 128;
  if (prefixText === null) return { address, prefix: bits, family };
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  let prefix = Number(prefixText);
  // ::ffff:203.0.113.0/120 is 203.0.113.0/24.
  if (family === 'ipv4' && isIPv6(written)) prefix -= 96;
  return prefix < 0 || prefix > bits ? null : { address, prefix, family };
}

/** The values of an `ip` condition as one lookup; `matches` takes the client address as TRUST_PROXY resolved it. */
export function ipMatcher(values: readonly string[]): (ip: string | undefined) => boolean {
  const list = new BlockList();
  for (const v of values) {
    const r = parseIpRange(v);
    if (r) list.addSubnet(r.address, r.prefix, r.family);
  }
  return (ip) => {
    if (ip === undefined) return false;
    const address = canonicalAddress(ip);
    if (address === null) return false;
    return list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
  };
}
