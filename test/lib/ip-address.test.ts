import { describe, expect, it } from 'vitest';
import { canonicalAddress, classifyAddress, embeddedIPv4, isPublicAddress } from '../../src/lib/ip-address.js';

describe('IP addresses (SPEC §25: one spelling per address; §22/§24/§25: what Ferry never connects to)', () => {
  it.each([
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['[::ffff:cb00:7107]', '203.0.113.7'],
    ['::203.0.113.7', '203.0.113.7'],
    ['64:ff9b::203.0.113.7', '203.0.113.7'],
    ['[64:ff9b::cb00:7107]', '203.0.113.7'],
    ['0:0:0:0:0:ffff:cb00:7107', '203.0.113.7'],
  ])('when an IPv4 address is written as the IPv6 %s, then it is read as %s', (v6, v4) => {
    expect(embeddedIPv4(v6)).toBe(v4);
    expect(canonicalAddress(v6)).toBe(v4);
  });

  it.each([['::1'], ['::'], ['2001:db8::1'], ['64:ff9b:1::1'], ['fe80::ffff:1:2']])(
    'when %s carries no IPv4 address, then none is read from it',
    (v6) => expect(embeddedIPv4(v6)).toBeNull(),
  );

  it('when an address is spelled in several ways, then each has one canonical spelling', () => {
    expect(canonicalAddress('2001:0DB8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
    expect(canonicalAddress('1:0:0:2:0:0:0:3')).toBe('1:0:0:2::3');
    expect(canonicalAddress('[fe80::1%eth0]')).toBe('fe80::1');
    expect(canonicalAddress('10.0.0.1')).toBe('10.0.0.1');
    expect(canonicalAddress('example.com')).toBeNull();
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['fd00::1', 'private'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['[::ffff:169.254.169.254]', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
  ])('when the address is %s, then its class is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
    expect(isPublicAddress(address)).toBe(cls === 'public');
  });

  it('when the text is no address, then it has no class', () => {
    expect(classifyAddress('localhost')).toBeNull();
    expect(classifyAddress('1.2.3')).toBeNull();
  });
});
