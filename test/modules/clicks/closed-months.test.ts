import { describe, expect, it } from 'vitest';
import { ClosedMonthCache, spans } from '../../../src/modules/clicks/stats/closed-months.js';

const at = (iso: string) => Date.parse(iso);
const show = (list: ReturnType<typeof spans>) =>
  list.map(
    (s) =>
      `${new Date(s.from).toISOString().slice(0, 10)}..${new Date(s.to).toISOString().slice(0, 10)}${s.closed ? ' closed' : ''}`,
  );

describe('windows cut at month boundaries', () => {
  it('when a window spans several months, then the days before the first whole month, each whole month, and the days after', () => {
    expect(show(spans(at('2026-01-15T00:00:00Z'), at('2026-04-10T00:00:00Z'), at('2026-05-20T00:00:00Z')))).toEqual([
      '2026-01-15..2026-02-01 closed',
      '2026-02-01..2026-03-01 closed',
      '2026-03-01..2026-04-01 closed',
      '2026-04-01..2026-04-10 closed',
    ]);
  });

  it('when the window reaches the last day or so, then that part is open and the days before it closed', () => {
    expect(show(spans(at('2026-02-01T00:00:00Z'), at('2026-04-01T00:00:00Z'), at('2026-04-01T12:00:00Z')))).toEqual([
      '2026-02-01..2026-03-01 closed',
      '2026-03-01..2026-03-31 closed',
      '2026-03-31..2026-04-01',
    ]);
    expect(show(spans(at('2026-03-03T05:00:00Z'), at('2026-03-09T00:00:00Z'), at('2026-03-08T10:00:00Z')))).toEqual([
      '2026-03-03..2026-03-07 closed',
      '2026-03-07..2026-03-09',
    ]);
    expect(show(spans(at('2026-03-03T05:00:00Z'), at('2026-03-09T00:00:00Z'), at('2026-03-03T06:00:00Z')))).toEqual([
      '2026-03-03..2026-03-09',
    ]);
  });

  it('when spans are put together, then they cover the window exactly once', () => {
    const from = at('2025-11-17T13:00:00Z');
    const to = at('2027-02-02T07:00:00Z');
    const list = spans(from, to, to);
    expect(list[0]!.from).toBe(from);
    expect(list[list.length - 1]!.to).toBe(to);
    for (let i = 1; i < list.length; i += 1) expect(list[i]!.from).toBe(list[i - 1]!.to);
  });
});

describe('remembered sums of closed months', () => {
  it('when a closed month is asked again, then it is not loaded again; an open span always is', async () => {
    const cache = new ClosedMonthCache();
    let loads = 0;
    const load = async (): Promise<Array<[string, number]>> => [['x', ++loads]];
    const closed = { from: 0, to: 1, closed: true };
    expect(await cache.rows('k', closed, 0, load)).toEqual([['x', 1]]);
    expect(await cache.rows('k', closed, 1000, load)).toEqual([['x', 1]]);
    expect(await cache.rows('k', { ...closed, closed: false }, 1000, load)).toEqual([['x', 2]]);
    // After ten minutes a remembered sum is read again (late writes heal).
    expect(await cache.rows('k', closed, 10 * 60_000 + 1, load)).toEqual([['x', 3]]);
  });
});
