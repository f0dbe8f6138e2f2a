import { describe, expect, it } from 'vitest';
import { LinkCache, type RedirectTarget } from '../../../src/modules/redirect/link-cache.js';
import { TestClock } from '../../helpers/app.js';

const link = (id: number): RedirectTarget => ({
  kind: 'link',
  id,
  code: `c${id}`,
  alias: null,
  url: `https://example.com/${id}`,
  expiresAt: null,
  rules: null,
  preview: null,
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
});
