import { describe, expect, it } from 'vitest';
import { UserAgentCache } from '../../../src/modules/clicks/event/user-agent.js';
import { anonymizeIp, countryCode, dailyVisitorHash } from '../../../src/modules/clicks/event/visitor.js';
import { endOfDay, nextDay, startOfDay } from '../../../src/modules/clicks/stats/time-zone.js';
import { UA } from './user-agents.js';

describe('describing a visit', () => {
  it.each([
    ['203.0.113.77', '203.0.113.0'],
    ['2001:db8:85a3:1:2:3:4:5', '2001:db8:85a3::'],
    ['2001:db8::1', '2001:db8::'],
    ['::ffff:10.1.2.3', '10.1.2.0'],
    ['fe80::1%eth0', 'fe80::'],
    ['::1', '::'],
    ['not an address', null],
  ])('when %s is anonymized, then %s', (ip, expected) => {
    expect(anonymizeIp(ip)).toBe(expected);
  });

  it('when a daily hash is made, then it differs per address and per UTC day, and is stable within a day', () => {
    const salt = Buffer.alloc(32, 7);
    const day = Date.parse('2026-05-01T10:00:00Z');
    const h = dailyVisitorHash(salt, '203.0.113.77', day);
    expect(h).toMatch(/^h:[0-9a-f]{32}$/);
    expect(dailyVisitorHash(salt, '203.0.113.77', day + 3_600_000)).toBe(h);
    expect(dailyVisitorHash(salt, '203.0.113.78', day)).not.toBe(h);
    expect(dailyVisitorHash(salt, '203.0.113.77', day + 86_400_000)).not.toBe(h);
    expect(dailyVisitorHash(Buffer.alloc(32, 8), '203.0.113.77', day)).not.toBe(h);
  });

  it.each([
    ['DE', 'DE'],
    [' fr ', 'FR'],
    ['XX', null],
    ['T1', null],
    ['DEU', null],
    ['', null],
    [undefined, null],
  ])('when the country header is %j, then %j', (value, expected) => {
    expect(countryCode(value)).toBe(expected);
  });

  it('when user agents are described, then bots, browsers, OS and devices come from isbot and ua-parser-js, through a bounded cache', () => {
    const cache = new UserAgentCache(3);
    expect(cache.describe(UA.googlebot)).toMatchObject({ isBot: true, device: 'bot' });
    expect(cache.describe(UA.slackbot)).toMatchObject({ isBot: true, device: 'bot' });
    expect(cache.describe(UA.curl)).toMatchObject({ isBot: true, device: 'bot' });
    expect(cache.describe(UA.chromeWindows)).toEqual({
      isBot: false,
      browser: 'Chrome',
      os: 'Windows',
      device: 'desktop',
    });
    expect(cache.describe(UA.safariIphone)).toEqual({
      isBot: false,
      browser: 'Mobile Safari',
      os: 'iOS',
      device: 'mobile',
    });
    expect(cache.describe(null)).toMatchObject({ isBot: true, device: 'bot' });
    expect(cache.size).toBe(3);
  });

  it('when more distinct user agents arrive than the cache holds, then it stays at its bound and keeps the ones read since', () => {
    const cache = new UserAgentCache(3);
    const agent = (n: number) => `${UA.chromeWindows} build/${n}`;
    const first = cache.describe(agent(1));
    const second = cache.describe(agent(2));
    cache.describe(agent(3));
    // Read again (the exact string, another copy of it): the same description, not a new parse.
    expect(cache.describe(`${agent(1)}`)).toBe(first);
    for (let n = 4; n <= 50; n += 1) {
      cache.describe(agent(n));
      expect(cache.size).toBeLessThanOrEqual(3);
    }
    expect(cache.size).toBe(3);
    // Agent 2 was never read again: evicted, so it is parsed anew (an equal description, another object).
    const again = cache.describe(agent(2));
    expect(again).toEqual(second);
    expect(again).not.toBe(second);
  });

  it('when the cache holds the agent that is read on every visit, then a stream of one-off agents does not evict it', () => {
    const cache = new UserAgentCache(4);
    const popular = cache.describe(UA.safariIphone);
    for (let n = 0; n < 100; n += 1) {
      expect(cache.describe(UA.safariIphone)).toBe(popular);
      cache.describe(`${UA.chromeWindows} one-off/${n}`);
    }
    expect(cache.size).toBe(4);
  });

  it('when days are cut in a zone with daylight saving, then they start at local midnight', () => {
    const tz = 'Europe/Berlin';
    const sat = startOfDay(Date.parse('2026-03-28T12:00:00Z'), tz);
    expect(new Date(sat).toISOString()).toBe('2026-03-27T23:00:00.000Z');
    expect(nextDay(sat, tz) - sat).toBe(24 * 3_600_000);
    expect(nextDay(nextDay(sat, tz), tz) - nextDay(sat, tz)).toBe(23 * 3_600_000);
    expect(endOfDay(sat, tz)).toBe(sat);
    // A day whose midnight does not exist (Santiago moves its clocks at 00:00) starts at 01:00.
    expect(new Date(startOfDay(Date.parse('2026-09-06T12:00:00Z'), 'America/Santiago')).toISOString()).toBe(
      '2026-09-06T04:00:00.000Z',
    );
  });
});
