import { describe, expect, it } from 'vitest';
import {
  entryBytes,
  LINK_ENTRY_BYTES,
  LinkCache,
  MISS_ENTRY_BYTES,
  type RedirectTarget,
} from '../../../src/modules/redirect/link-cache.js';
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
    expect(one).toBeGreaterThan(LINK_ENTRY_BYTES + 2000);
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
});
