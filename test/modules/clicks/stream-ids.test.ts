import { describe, expect, it } from 'vitest';
import { streamIdBefore } from '../../../src/modules/clicks/transport/click-stream.js';

/** The order Redis gives stream ids: milliseconds, then sequence, each a 64-bit number. */
function reference(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am < bm || (am === bm && as < bs);
}

describe('stream ids (click-stream.ts streamIdBefore)', () => {
  it('when two ids differ in milliseconds, sequence or the length of either, then they compare as Redis orders them', () => {
    const ids = [
      '0-0',
      '0-1',
      '0-10',
      '9-0',
      '10-0',
      '10-9',
      '10-10',
      '1764970000000-0',
      '1764970000000-2',
      '1764970000000-11',
      '1764970000001-0',
      '9999999999999-99',
      '10000000000000-0',
      '18446744073709551615-18446744073709551615',
    ];
    for (const a of ids) for (const b of ids) expect([a, b, streamIdBefore(a, b)]).toEqual([a, b, reference(a, b)]);
  });

  it('when ids are drawn at random around one moment, then every pair compares as Redis orders them', () => {
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const id = () => `${1764970000000 + next(3) * (next(2) ? 1 : 1000)}-${next(2) ? next(12) : next(100000)}`;
    for (let i = 0; i < 5000; i++) {
      const a = id();
      const b = id();
      expect([a, b, streamIdBefore(a, b)]).toEqual([a, b, reference(a, b)]);
    }
  });
});
