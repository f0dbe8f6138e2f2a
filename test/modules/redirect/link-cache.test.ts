import { describe, expect, it, vi } from 'vitest';
import {
  entryBytes,
  LINK_ENTRY_BYTES,
  LinkCache,
  linkCacheKey,
  MISS_ENTRY_BYTES,
  NAMED_LINK_BYTES,
  PLAIN_LINK_BYTES,
  type RedirectTarget,
} from '../../../src/modules/redirect/link-cache.js';
import { createRedirectResolver } from '../../../src/modules/redirect/redirect-resolver.js';
import type { CodeLookup } from '../../../src/modules/redirect/redirect.repository.js';
import { TestClock } from '../../helpers/app.js';

type LinkTarget = Extract<RedirectTarget, { kind: 'link' }>;
const link = (id: number): LinkTarget => ({
  kind: 'link',
  id,
  code: `c${id}`,
  alias: null,
  url: `https://example.com/${id}`,
  expiresAt: null,
  rules: null,
  preview: null,
  broken: null,
});

describe('redirect cache', () => {
  it('when it is full, then the least recently used entry is evicted', () => {
    const cache = new LinkCache(new TestClock(0), { capacity: 2, positiveTtlMs: 1000, negativeTtlMs: 1000 });
    cache.set('a', link(1), cache.epoch());
    cache.set('b', link(2), cache.epoch());
    expect(cache.get('a')).toEqual(link(1)); // a is now the most recently used
    cache.set('c', link(3), cache.epoch());
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual(link(1));
    expect(cache.get('c')).toEqual(link(3));
    expect(cache.size()).toBe(2);
  });

  it('when entries age, then misses expire sooner than hits', () => {
    const clock = new TestClock(0);
    const cache = new LinkCache(clock, { capacity: 10, positiveTtlMs: 30_000, negativeTtlMs: 5_000 });
    cache.set('hit', link(1), cache.epoch());
    cache.set('miss', { kind: 'missing' }, cache.epoch());
    clock.advance(5_000);
    expect(cache.get('miss')).toBeUndefined();
    expect(cache.get('hit')).toBeDefined();
    clock.advance(25_000);
    expect(cache.get('hit')).toBeUndefined();
  });

  it('when a link entry is past its limit but within the stale window, then it is still answered and its re-read asked once', () => {
    const clock = new TestClock(0);
    const opts = { capacity: 10, positiveTtlMs: 30_000, negativeTtlMs: 5_000, staleMs: 60_000 };
    const cache = new LinkCache(clock, opts, () => 1); // every entry the whole of its limit
    const asked: string[] = [];
    cache.refreshWith((key) => asked.push(key));
    cache.set('hit', link(1), cache.epoch());
    cache.set('miss', { kind: 'missing' }, cache.epoch());
    clock.advance(30_000);
    expect(cache.get('hit')).toEqual(link(1));
    expect(cache.get('hit')).toEqual(link(1));
    expect(asked).toEqual(['hit']); // once, however many visits wait for it
    expect(cache.get('miss')).toBeUndefined(); // a miss is never answered stale
    clock.advance(5_000);
    cache.get('hit');
    expect(asked).toEqual(['hit', 'hit']); // the first re-read was lost: asked again after the patience
    cache.set('hit', link(2), cache.epoch()); // the re-read's answer replaces it, fresh
    clock.advance(29_000);
    expect(cache.get('hit')).toEqual(link(2));
    expect(asked).toHaveLength(2);
    clock.advance(1_000 + 60_000);
    expect(cache.get('hit')).toBeUndefined(); // past the stale window: the visit reads the database itself
  });

  it('when many links are cached, then their time limit grows so that the re-reads stay within reReadsPerSecond', () => {
    const clock = new TestClock(1_000_000);
    const opts = { capacity: 1_000, positiveTtlMs: 1_000, reReadsPerSecond: 20, negativeTtlMs: 1_000, staleMs: 60_000 };
    const cache = new LinkCache(clock, opts, () => 1);
    const asked: string[] = [];
    cache.refreshWith((key) => asked.push(key));
    cache.set('small', link(0), cache.epoch()); // alone in the cache: positiveTtlMs
    for (let i = 1; i <= 100; i += 1) cache.set(`l${i}`, link(i), cache.epoch());
    cache.set('large', link(101), cache.epoch()); // 101 cached, twice 101 / 20 a second: 10.1 s
    cache.set('miss', { kind: 'missing' }, cache.epoch());
    clock.advance(1_000);
    cache.get('small');
    expect(asked).toEqual(['small']);
    clock.advance(9_000);
    cache.get('large');
    expect(asked).toEqual(['small']); // still within its limit
    expect(cache.get('miss')).toBeUndefined(); // misses keep negativeTtlMs, however large the cache
    clock.advance(200);
    cache.get('large');
    expect(asked).toEqual(['small', 'large']);
  });

  it('when link entries are cached together, then each gets between half and all of its limit', () => {
    const clock = new TestClock(1_000_000);
    const shares = [0, 0.5, 1];
    const cache = new LinkCache(clock, { capacity: 10, positiveTtlMs: 30_000, staleMs: 0 }, () => shares.shift()!);
    for (const code of ['half', 'three-quarters', 'all']) cache.set(code, link(1), cache.epoch());
    clock.advance(15_000);
    expect(cache.get('half')).toBeUndefined();
    expect(cache.get('three-quarters')).toBeDefined();
    clock.advance(7_500);
    expect(cache.get('three-quarters')).toBeUndefined();
    expect(cache.get('all')).toBeDefined();
    clock.advance(7_500);
    expect(cache.get('all')).toBeUndefined();
  });

  it('when stale entries are visited in one turn, then the resolver re-reads them, one query per domain, and caches them', async () => {
    const clock = new TestClock(0);
    const cache = new LinkCache(clock, { capacity: 10, positiveTtlMs: 30_000, negativeTtlMs: 5_000, staleMs: 60_000 });
    const row = (id: number, code: string): CodeLookup & { code: string } => ({
      code,
      id,
      original_url: `https://example.com/new/${id}`,
      expires_at: null,
      max_visits: null,
      forward_query: 0,
      password_hash: null,
      disabled_at: null,
      short_code: code,
      rules: null,
      preview: null,
      retired_reason: null,
      health_status: 'unknown',
      fallback_url: null,
    });
    const batches: Array<[number, string[]]> = [];
    let answered: () => void = () => undefined;
    const allAnswered = new Promise<void>((resolve) => (answered = resolve));
    const queries = {
      lookupCode: (): undefined => undefined,
      lookupCodes: async (names: readonly string[], domainId = 0) => {
        batches.push([domainId, [...names].sort()]);
        if (batches.length === 2) setImmediate(answered);
        // c3 was deleted behind the API's back: absent from the answer
        return names.filter((n) => n !== 'c3').map((n) => row(Number(n.slice(1)), n));
      },
    };
    const resolver = createRedirectResolver({ queries, cache, clock });
    for (const [key, id] of [
      ['c1', 1],
      ['c2', 2],
      ['c3', 3],
      ['c4@7', 4],
    ] as const)
      cache.set(key, link(id), cache.epoch());
    clock.advance(31_000);
    expect(resolver.cached('c1', 0)).toEqual(link(1));
    expect(resolver.cached('c2', 0)).toEqual(link(2));
    expect(resolver.cached('c3', 0)).toEqual(link(3));
    expect(resolver.cached('c4', 7)).toEqual(link(4));
    await allAnswered;
    expect(batches.sort()).toEqual([
      [0, ['c1', 'c2', 'c3']],
      [7, ['c4']],
    ]);
    expect(resolver.cached('c1', 0)).toMatchObject({ kind: 'link', url: 'https://example.com/new/1' });
    expect(resolver.cached('c3', 0)).toEqual({ kind: 'missing' });
    expect(resolver.cached('c4', 7)).toMatchObject({ kind: 'link', url: 'https://example.com/new/4' });
  });

  it('when stale entries are visited over several turns, then one re-read takes them all, and the next those asked during it', async () => {
    const clock = new TestClock(0);
    const cache = new LinkCache(clock, { capacity: 10, positiveTtlMs: 30_000, staleMs: 60_000 });
    const queried: string[][] = [];
    let answer: () => void = () => undefined;
    const queries = {
      lookupCode: (): undefined => undefined,
      lookupCodes: async (names: readonly string[]) => {
        queried.push([...names]);
        await new Promise<void>((resolve) => (answer = resolve));
        return [];
      },
    };
    const due: Array<() => void> = [];
    const resolver = createRedirectResolver({ queries, cache, clock, refreshAfter: (read) => due.push(read) });
    for (const id of [1, 2, 3, 4]) cache.set(`c${id}`, link(id), cache.epoch());
    clock.advance(31_000);
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    resolver.cached('c1', 0);
    await turn();
    resolver.cached('c2', 0);
    await turn();
    expect([queried.length, due.length]).toEqual([0, 1]); // gathered, not read a turn at a time
    due.shift()!();
    expect(queried).toEqual([['c1', 'c2']]);
    resolver.cached('c3', 0); // asked while the read is out
    resolver.cached('c4', 0);
    expect(due).toHaveLength(0);
    answer();
    await vi.waitFor(() => expect(due).toHaveLength(1));
    due.shift()!();
    expect(queried).toEqual([
      ['c1', 'c2'],
      ['c3', 'c4'],
    ]);
    answer();
  });

  it('when a lookup started before an invalidation, then its answer is not cached', () => {
    const cache = new LinkCache(new TestClock(0));
    const epoch = cache.epoch();
    cache.invalidate('a'); // e.g. the link was deleted while the database was being asked
    cache.set('a', link(1), epoch);
    expect(cache.get('a')).toBeUndefined();
  });

  it('when the entries outgrow the byte budget, then the oldest unread ones are evicted until they fit, whatever their count', () => {
    const long = (id: number): LinkTarget => ({
      ...link(id),
      url: `https://example.com/${'x'.repeat(2000)}/${id}`,
    });
    const one = entryBytes('a', long(1));
    expect(one).toBeGreaterThan(NAMED_LINK_BYTES + 2000);
    const cache = new LinkCache(new TestClock(0), { capacity: 1000, maxBytes: 3 * one + 10 });
    for (const [i, key] of ['a', 'b', 'c'].entries()) cache.set(key, long(i + 1), cache.epoch());
    expect(cache.size()).toBe(3);
    expect(cache.get('a')).toBeDefined(); // read: spared once
    cache.set('d', long(4), cache.epoch());
    expect(cache.size()).toBe(3);
    expect(cache.bytes()).toBeLessThanOrEqual(3 * one + 10);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    // Short entries: many more of them fit in the same budget.
    for (let i = 0; i < 40; i += 1) cache.set(`s${i}`, link(100 + i), cache.epoch());
    expect(cache.size()).toBeGreaterThan(10);
    expect(cache.bytes()).toBeLessThanOrEqual(3 * one + 10);
  });

  it('when entries are replaced, forgotten or cleared, then the bytes counted follow them', () => {
    const cache = new LinkCache(new TestClock(0), { maxBytes: 1_000_000 });
    cache.set('a', link(1), cache.epoch());
    cache.set('m', { kind: 'missing' }, cache.epoch());
    expect(cache.bytes()).toBe(entryBytes('a', link(1)) + MISS_ENTRY_BYTES + 1);
    cache.set('a', { ...link(1), url: 'https://example.com/a-longer-url-than-before' }, cache.epoch());
    expect(cache.bytes()).toBe(
      entryBytes('a', { ...link(1), url: 'https://example.com/a-longer-url-than-before' }) + MISS_ENTRY_BYTES + 1,
    );
    cache.forgetMisses();
    expect(cache.bytes()).toBe(entryBytes('a', { ...link(1), url: 'https://example.com/a-longer-url-than-before' }));
    cache.forget('a');
    expect(cache.bytes()).toBe(0);
    cache.set('b', link(2), cache.epoch());
    cache.clear();
    expect([cache.size(), cache.bytes()]).toEqual([0, 0]);
  });

  it('when one entry alone is larger than the budget, or the budget is 0, then nothing is cached', () => {
    const huge = new LinkCache(new TestClock(0), { maxBytes: 100 });
    huge.set('a', link(1), huge.epoch());
    expect(huge.get('a')).toBeUndefined();
    const off = new LinkCache(new TestClock(0), { maxBytes: 0 });
    off.set('m', { kind: 'missing' }, off.epoch());
    expect([off.size(), off.bytes()]).toEqual([0, 0]);
  });

  it('when a link is cached under its own code with nothing but a destination, then it is kept compact and answered whole', () => {
    const clock = new TestClock(0);
    const cache = new LinkCache(clock, { capacity: 10, positiveTtlMs: 30_000, staleMs: 60_000 }, () => 1);
    const plain = { ...link(1), code: 'c1' };
    const expiring = { ...link(2), code: 'c2', expiresAt: 99_000 };
    expect(entryBytes('c1', plain)).toBe(PLAIN_LINK_BYTES + 2 + plain.url.length);
    expect(entryBytes('c2', expiring)).toBeGreaterThan(LINK_ENTRY_BYTES);
    cache.set('c1', plain, cache.epoch());
    cache.set('c2', expiring, cache.epoch());
    cache.set('m', { kind: 'missing' }, cache.epoch());
    expect(cache.get('c1')).toEqual(plain);
    expect(cache.get('c2')).toEqual(expiring);
    cache.forgetMisses();
    expect([cache.size(), cache.get('c1')]).toEqual([2, plain]);
    // Past its limit, within the stale window: still answered, its re-read asked for once.
    const asked: string[] = [];
    cache.refreshWith((key) => asked.push(key));
    clock.advance(30_000);
    expect(cache.get('c1')).toEqual(plain);
    expect(cache.get('c1')).toEqual(plain);
    expect(asked).toEqual(['c1']);
    clock.advance(60_000);
    expect(cache.get('c1')).toBeUndefined();
  });

  it('when a bare link is cached under an alias or on a domain, then it costs a plain link and its names, answered whole', () => {
    const cache = new LinkCache(new TestClock(0), { capacity: 10 });
    const viaAlias = { ...link(1), code: 'c1', alias: 'spring-sale-2026' };
    const onDomain = { ...link(2), code: 'c2' };
    const aliasOnDomain = { ...link(3), code: 'c3', alias: 'summer' };
    const withRules = { ...viaAlias, rules: { maxVisits: 5, forwardQuery: false, passwordHash: null, routing: null } };
    const keys = ['spring-sale-2026', linkCacheKey(7, 'c2'), linkCacheKey(7, 'summer')] as const;
    expect(entryBytes(keys[0], viaAlias)).toBe(NAMED_LINK_BYTES + 16 + 2 + viaAlias.url.length);
    expect(entryBytes(keys[1], onDomain)).toBe(NAMED_LINK_BYTES + 4 + 2 + onDomain.url.length);
    expect(entryBytes(keys[2], aliasOnDomain)).toBe(NAMED_LINK_BYTES + 8 + 2 + 6 + aliasOnDomain.url.length);
    // A whole target costs more: the estimate a link with rules, an expiry or a preview still pays.
    expect(entryBytes(keys[0], withRules)).toBeGreaterThan(LINK_ENTRY_BYTES + viaAlias.url.length);
    cache.set(keys[0], viaAlias, cache.epoch());
    cache.set(keys[1], onDomain, cache.epoch());
    cache.set(keys[2], aliasOnDomain, cache.epoch());
    cache.set('ruled', withRules, cache.epoch());
    expect(cache.get(keys[0])).toEqual(viaAlias);
    expect(cache.get(keys[1])).toEqual(onDomain);
    expect(cache.get(keys[2])).toEqual(aliasOnDomain);
    expect(cache.get('ruled')).toEqual(withRules);
    expect(cache.bytes()).toBe(
      entryBytes(keys[0], viaAlias) +
        entryBytes(keys[1], onDomain) +
        entryBytes(keys[2], aliasOnDomain) +
        entryBytes('ruled', withRules),
    );
  });

  it('when the limit is infinite (the only writer), then a plain link never ages out', () => {
    const clock = new TestClock(0);
    const cache = new LinkCache(clock, { capacity: 10, positiveTtlMs: Infinity });
    cache.set('c1', { ...link(1), code: 'c1' }, cache.epoch());
    clock.advance(365 * 86_400_000);
    expect(cache.get('c1')).toEqual({ ...link(1), code: 'c1' });
  });
});
