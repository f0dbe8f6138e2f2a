import { describe, expect, it } from 'vitest';
import {
  assertDestinationsAllowed,
  canonicalHost,
  matchesBlocked,
  parseBlockedHosts,
} from '../../src/lib/host-blocklist.js';
import { AppError } from '../../src/lib/app-error.js';

/** SPEC §18, §25: the blocked hosts list, and a host in every spelling. */
describe('the blocked hosts list', () => {
  it('when a file is read, then comments, blank lines, case, trailing dots and *. are handled, names become punycode, and bad lines are reported', () => {
    const { hosts, problems } = parseBlockedHosts(
      '# phishing\nEvil.Example.  \n\n*.tracker.test # wildcard spelling\nbücher.example\n10.0.0.1\nnot a host\nhttp://x/y\n',
    );
    expect([...hosts].sort()).toEqual(['10.0.0.1', 'evil.example', 'tracker.test', 'xn--bcher-kva.example']);
    expect(problems.map((p) => p.line)).toEqual([7, 8]);
  });

  it('when a list names addresses in any spelling, then each is kept as its one canonical spelling', () => {
    const { hosts, problems } = parseBlockedHosts(
      '[2001:DB8:0:0::1]\n2001:db8::2\n[::ffff:203.0.113.7]\n0xcb.0x71.7\n3405803784\n[64:ff9b::c633:6401]\n',
    );
    expect(problems).toEqual([]);
    expect([...hosts].sort()).toEqual([
      '198.51.100.1',
      '2001:db8::1',
      '2001:db8::2',
      '203.0.113.7',
      '203.0.113.8',
      '203.113.0.7',
    ]);
  });

  it('when a host is checked, then a listed name blocks itself and its subdomains only; an address only itself', () => {
    const hosts = new Set(['evil.example', '10.0.0.1', '2001:db8::1']);
    expect(matchesBlocked(hosts, 'evil.example')).toBe(true);
    expect(matchesBlocked(hosts, 'www.login.evil.example')).toBe(true);
    expect(matchesBlocked(hosts, 'EVIL.example.')).toBe(true);
    expect(matchesBlocked(hosts, 'notevil.example')).toBe(false);
    expect(matchesBlocked(hosts, 'example')).toBe(false);
    expect(matchesBlocked(hosts, '10.0.0.1')).toBe(true);
    expect(matchesBlocked(hosts, '1.10.0.0.1')).toBe(false);
    expect(matchesBlocked(hosts, '[2001:db8::1]')).toBe(true);
  });

  it('when a host is spelled another way (IDN or punycode, numeric IPv4, IPv6 forms of an IPv4 address, IPv6 groups), then it matches as the host it is', () => {
    const { hosts } = parseBlockedHosts('bücher.example\nxn--caf-dma.example\n203.0.113.7\n[2001:db8::1]\n');
    const blocked = [
      'xn--bcher-kva.example',
      'BÜCHER.example.',
      'www.bücher.example',
      'café.example',
      'CAFÉ.example',
      'shop.xn--caf-dma.example',
      '203.0.113.7',
      '203.0.113.7.',
      '3405803783',
      '0xcb.0.0x71.7',
      '0313.0.0161.07',
      '[::ffff:203.0.113.7]',
      '::ffff:cb00:7107',
      '[::203.0.113.7]',
      '[::cb00:7107]',
      '[64:ff9b::203.0.113.7]',
      '64:ff9b::cb00:7107',
      '[0:0:0:0:0:ffff:cb00:7107]',
      '[2001:DB8::1]',
      '2001:db8:0:0:0:0:0:1',
      '[2001:0db8::0:0001]',
    ];
    for (const host of blocked) expect(matchesBlocked(hosts, host), host).toBe(true);
    const free = [
      'bucher.example',
      'cafe.example',
      '203.0.113.8',
      '[::ffff:203.0.113.8]',
      '[64:ff9b::203.0.113.8]',
      '[2001:db8::2]',
      '[::1]',
      '[64:ff9c::cb00:7107]',
    ];
    for (const host of free) expect(matchesBlocked(hosts, host), host).toBe(false);
  });

  it('when text names no host, then its canonical spelling is null', () => {
    for (const text of ['', '.', 'a b', 'x/y', 'user@host', '[not-an-address]', 'host:80'])
      expect(canonicalHost(text), text).toBeNull();
  });

  it('when destinations are checked, then one 422 DESTINATION_BLOCKED names every blocked field, and URLs that do not parse are left to their own rules', () => {
    const list = { isBlocked: (host: string) => matchesBlocked(new Set(['203.0.113.7']), host) };
    let thrown: unknown;
    try {
      assertDestinationsAllowed(list, [
        { field: 'root_redirect', url: 'http://[::ffff:203.0.113.7]/' },
        { field: 'not_found_redirect', url: 'https://fine.example/' },
        { field: 'expired_redirect', url: 'http://0xcb.0.0x71.7/gone' },
        { field: 'other', url: 'not a url' },
      ]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({
      code: 'DESTINATION_BLOCKED',
      details: [{ field: 'root_redirect' }, { field: 'expired_redirect' }],
    });
    expect(() =>
      assertDestinationsAllowed(list, [{ field: 'root_redirect', url: 'https://fine.example/' }]),
    ).not.toThrow();
  });
});
