import { describe, expect, it } from 'vitest';
import {
  chooseVariant,
  compileRules,
  firstMatch,
  platformOf,
  RuleProbe,
  traceRules,
  type Rule,
  type RuleVisit,
} from '../../../src/modules/links/rules/index.js';
import { UserAgentCache } from '../../../src/modules/clicks/index.js';
import { createRouting } from '../../../src/modules/redirect/visit-routing.js';

const agents = new UserAgentCache();
const UA = {
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  ipadWebView: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  mac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
  android:
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  androidTablet:
    'Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  windows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  ubuntu: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
  chromebook:
    'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  opera:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 OPR/105.0.0.0',
};

const visitOf = (ua: string | undefined, more: Partial<RuleVisit> = {}): RuleVisit => ({
  agent: agents.describe(ua ?? null),
  userAgent: ua,
  languages: [],
  country: null,
  ip: undefined,
  referrer: undefined,
  ...more,
});
const rules = (...list: Array<Omit<Rule, 'id' | 'enabled'> & Partial<Rule>>): string =>
  JSON.stringify(list.map((r, i) => ({ id: `r${i}`, enabled: true, ...r })));
const at = (ms = Date.parse('2030-06-01T00:00:00Z')) => ms;
const winner = (text: string, visit: RuleVisit, query = '', now = at()) =>
  firstMatch(compileRules(text)!, new RuleProbe(visit, query, now))?.id ?? null;

describe('the device a user agent shows', () => {
  it.each([
    ['iphone', ['ios', 'mobile']],
    ['ipad', ['ipados', 'tablet']],
    ['ipadWebView', ['ipados', 'tablet']],
    ['mac', ['macos', 'desktop']],
    ['android', ['android', 'mobile']],
    ['androidTablet', ['android', 'tablet']],
    ['windows', ['windows', 'desktop']],
    ['ubuntu', ['linux', 'desktop']],
    ['chromebook', ['chromeos', 'desktop']],
  ] as const)('when the agent is %s, then the device values are %j', (name, expected) => {
    const agent = agents.describe(UA[name]);
    expect([...platformOf(agent, UA[name])].sort()).toEqual([...expected].sort());
  });
});

describe('conditions', () => {
  it('when a rule has several conditions, then all must match (AND); the values of one are alternatives (OR)', () => {
    const text = rules({
      conditions: [
        { type: 'device', values: ['android', 'ios'] },
        { type: 'browser', values: ['chrome', 'firefox'] },
      ],
      target: { url: 'https://e.com/x' },
    });
    expect(winner(text, visitOf(UA.android))).toBe('r0');
    expect(winner(text, visitOf(UA.iphone))).toBe(null); // iOS but Safari
    expect(winner(text, visitOf(UA.windows))).toBe(null); // Chrome but Windows
  });

  it('when rules overlap, then the first enabled match wins, and none matching gives null', () => {
    const text = rules(
      { enabled: false, conditions: [{ type: 'browser', values: ['opera'] }], target: { url: 'https://e.com/0' } },
      { conditions: [{ type: 'device', values: ['windows'] }], target: { url: 'https://e.com/1' } },
      { conditions: [{ type: 'browser', values: ['opera'] }], target: { url: 'https://e.com/2' } },
    );
    expect(winner(text, visitOf(UA.opera))).toBe('r1');
    expect(winner(text, visitOf(UA.mac))).toBe(null);
  });

  it('when languages are compared, then a value without region matches by primary tag, one with a region needs it', () => {
    const en = rules({ conditions: [{ type: 'language', values: ['en'] }], target: { url: 'https://e.com/' } });
    const br = rules({ conditions: [{ type: 'language', values: ['pt-BR'] }], target: { url: 'https://e.com/' } });
    expect(winner(en, visitOf(undefined, { languages: ['en-gb'] }))).toBe('r0');
    expect(winner(en, visitOf(undefined, { languages: ['eng'] }))).toBe(null);
    expect(winner(br, visitOf(undefined, { languages: ['pt'] }))).toBe(null);
    expect(winner(br, visitOf(undefined, { languages: ['pt-pt'] }))).toBe(null);
    expect(winner(br, visitOf(undefined, { languages: ['fr', 'pt-br'] }))).toBe('r0');
  });

  it('when the address, country, referrer, query and time are compared, then each follows its rule', () => {
    const ip = rules({
      conditions: [{ type: 'ip', values: ['192.0.2.7', '10.0.0.0/8', '2001:db8::/32'] }],
      target: { url: 'https://e.com/' },
    });
    expect(winner(ip, visitOf(undefined, { ip: '10.200.1.1' }))).toBe('r0');
    expect(winner(ip, visitOf(undefined, { ip: '::ffff:192.0.2.7' }))).toBe('r0');
    expect(winner(ip, visitOf(undefined, { ip: '2001:db8:ffff::1' }))).toBe('r0');
    expect(winner(ip, visitOf(undefined, { ip: '2001:db9::1' }))).toBe(null);
    expect(winner(ip, visitOf(undefined, { ip: '11.0.0.1' }))).toBe(null);
    expect(winner(ip, visitOf(undefined))).toBe(null);
    const country = rules({ conditions: [{ type: 'country', values: ['DE'] }], target: { url: 'https://e.com/' } });
    expect(winner(country, visitOf(undefined, { country: 'DE' }))).toBe('r0');
    expect(winner(country, visitOf(undefined, { country: null }))).toBe(null);
    const ref = rules({
      conditions: [{ type: 'referrer_host', values: ['example.org'] }],
      target: { url: 'https://e.com/' },
    });
    expect(winner(ref, visitOf(undefined, { referrer: 'https://a.b.example.org/x' }))).toBe('r0');
    expect(winner(ref, visitOf(undefined, { referrer: 'https://badexample.org/' }))).toBe(null);
    expect(winner(ref, visitOf(undefined, { referrer: 'not a url' }))).toBe(null);
    const q = rules({
      conditions: [{ type: 'query', key: 'c', match: 'equals', values: ['a', 'b'] }],
      target: { url: 'https://e.com/' },
    });
    expect(winner(q, visitOf(undefined), 'c=x&c=b')).toBe('r0');
    expect(winner(q, visitOf(undefined), 'c=x')).toBe(null);
    const window = rules({
      conditions: [
        { type: 'after', values: ['2030-01-01T00:00:00.000Z'] },
        { type: 'before', values: ['2030-02-01T00:00:00.000Z'] },
      ],
      target: { url: 'https://e.com/' },
    });
    expect(winner(window, visitOf(undefined), '', Date.parse('2030-01-01T00:00:00Z'))).toBe('r0');
    expect(winner(window, visitOf(undefined), '', Date.parse('2029-12-31T23:59:59.999Z'))).toBe(null);
    expect(winner(window, visitOf(undefined), '', Date.parse('2030-02-01T00:00:00Z'))).toBe(null);
  });

  it('when a trace is asked, then every rule and condition is evaluated, a disabled rule never matches', () => {
    const text = rules(
      { enabled: false, conditions: [{ type: 'device', values: ['ios'] }], target: { url: 'https://e.com/0' } },
      {
        conditions: [
          { type: 'device', values: ['ios'] },
          { type: 'country', values: ['FR'] },
        ],
        target: { url: 'https://e.com/1' },
      },
    );
    const { winner: w, trace } = traceRules(compileRules(text)!, new RuleProbe(visitOf(UA.iphone), '', at()));
    expect(w).toBe(null);
    expect(trace).toEqual([
      { rule_id: 'r0', matched: false, conditions: [{ type: 'device', matched: true }] },
      {
        rule_id: 'r1',
        matched: false,
        conditions: [
          { type: 'device', matched: true },
          { type: 'country', matched: false },
        ],
      },
    ]);
  });
});

/** A small seeded PRNG (mulberry32): the same draws on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

describe('splits', () => {
  const split = rules({
    conditions: [{ type: 'query', key: 'z', match: 'absent', values: [] }],
    target: {
      split: [
        { id: 'a', url: 'https://e.com/a', weight: 20 },
        { id: 'b', url: 'https://e.com/b', weight: 30 },
        { id: 'c', url: 'https://e.com/c', weight: 50 },
      ],
      sticky: true,
    },
  });

  it('when the draw sweeps [0, 100), then each variant gets exactly its weight', () => {
    const compiled = compileRules(split)!.rules[0]!.target.split!;
    const counts: Record<string, number> = {};
    for (let i = 0; i < 10_000; i += 1) {
      const v = chooseVariant(compiled, (i / 10_000) * 100);
      counts[v.id] = (counts[v.id] ?? 0) + 1;
    }
    expect(counts).toEqual({ a: 2000, b: 3000, c: 5000 });
  });

  it('when 10,000 first visits are routed with a random draw, then each share is within 2 points of its weight and each gets its cookie', () => {
    const route = createRouting({ random: seeded(2026), clock: { now: at } });
    const compiled = compileRules(split)!;
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 10_000; i += 1) {
      const r = route({ id: 7, url: 'https://e.com/o' }, compiled, {
        name: 'code1',
        method: 'GET',
        query: '',
        context: { ...visitOf(UA.android), cookie: undefined, isBot: false },
      });
      counts[r.variant!]! += 1;
      expect(r.cookie).toBe(`ferry_v_7=${r.variant}; Path=/code1; Max-Age=2592000; HttpOnly; SameSite=Lax`);
    }
    expect(Math.abs(counts.a! / 100 - 20)).toBeLessThanOrEqual(2);
    expect(Math.abs(counts.b! / 100 - 30)).toBeLessThanOrEqual(2);
    expect(Math.abs(counts.c! / 100 - 50)).toBeLessThanOrEqual(2);
  });

  it('when a bot, a HEAD, a kept cookie or an unknown cookie comes, then first variant / kept / reassigned as §21 says', () => {
    const route = createRouting({ random: () => 0.99, clock: { now: at } });
    const compiled = compileRules(split)!;
    const visit = (method: string, ua: string, cookie?: string) =>
      route({ id: 7, url: 'https://e.com/o' }, compiled, {
        name: 'code1',
        method,
        query: '',
        context: { ...visitOf(ua), cookie, isBot: visitOf(ua).agent.isBot },
      });
    expect(visit('GET', 'Googlebot/2.1 (+http://www.google.com/bot.html)')).toMatchObject({
      variant: 'a',
      cookie: null,
    });
    expect(visit('HEAD', UA.android)).toMatchObject({ variant: 'a', cookie: null });
    expect(visit('GET', UA.android, 'ferry_v_7=b')).toMatchObject({ variant: 'b', cookie: null });
    expect(visit('GET', UA.android, 'ferry_v_7=zzz')).toMatchObject({
      variant: 'c',
      cookie: expect.stringContaining('ferry_v_7=c;'),
    });
    expect(visit('GET', UA.android, 'ferry_v_8=b')).toMatchObject({ variant: 'c' });
  });
});
