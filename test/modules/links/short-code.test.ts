import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CODE_ALPHABET,
  generateCode,
  isReservedCode,
  pooledRandomBytes,
} from '../../../src/modules/links/short-code.js';

/** Pearson's chi-square statistic of observed counts against a uniform expectation. */
const chiSquare = (counts: number[]): number => {
  const total = counts.reduce((a, b) => a + b, 0);
  const expected = total / counts.length;
  return counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
};

// 61 degrees of freedom; Wilson-Hilferty puts the 1e-5 upper tail at about 120 (mean 61, sd 11), so a fair
// generator fails one of these nine checks about once in 10,000 runs.
const CRITICAL = 120;
const SAMPLES = 200_000;

function countsByPosition(codes: string[]): number[][] {
  const counts = Array.from({ length: 8 }, () => new Array<number>(CODE_ALPHABET.length).fill(0));
  for (const code of codes) {
    for (let i = 0; i < code.length; i += 1) counts[i]![CODE_ALPHABET.indexOf(code[i]!)]! += 1;
  }
  return counts;
}

describe('short code generator', () => {
  it('when many codes are drawn, then every position uses the whole alphabet uniformly (chi-square)', () => {
    const codes = Array.from({ length: SAMPLES }, () => generateCode());
    expect(codes.every((c) => /^[0-9a-zA-Z]{8}$/.test(c))).toBe(true);
    const byPosition = countsByPosition(codes);
    for (const counts of byPosition) {
      expect(counts.every((c) => c > 0)).toBe(true);
      expect(chiSquare(counts)).toBeLessThan(CRITICAL);
    }
    const overall = byPosition.reduce(
      (acc, counts) => acc.map((v, i) => v + counts[i]!),
      new Array<number>(CODE_ALPHABET.length).fill(0),
    );
    expect(chiSquare(overall)).toBeLessThan(CRITICAL);
  });

  it('when the same test looks at a modulo-biased generator, then it rejects it (the test has power)', () => {
    const biased = () => Array.from(randomBytes(8), (b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join('');
    const counts = countsByPosition(Array.from({ length: SAMPLES }, biased));
    expect(chiSquare(counts[0]!)).toBeGreaterThan(CRITICAL * 3);
  });

  it('when the random source yields bytes of 248 or more, then they are skipped (rejection sampling, no modulo bias)', () => {
    const bytes = [248, 255, 0, 250, 61, 62, 123, 249, 247, 1, 2, 3, 4, 5, 6, 7];
    let i = 0;
    const source = (n: number) => Buffer.from(Array.from({ length: n }, () => bytes[i++ % bytes.length]!));
    // accepted: 0 61 62 123 247 1 2 3 -> alphabet[b % 62] (247, the largest accepted byte, is 61: Z)
    expect(generateCode(8, source)).toBe('0Z0ZZ123');
  });

  it('when the source only yields rejected bytes for a while, then it keeps drawing until the code is complete', () => {
    let calls = 0;
    const source = (n: number) => Buffer.alloc(n, calls++ < 3 ? 255 : 10);
    expect(generateCode(8, source)).toBe('aaaaaaaa');
    expect(calls).toBe(4);
  });

  it('when pooled random bytes are drawn past the pool, then no byte is handed out twice and the pool refills', () => {
    // Copies: a slice is a view of the pool, valid until the pool refills.
    const slices = Array.from({ length: 700 }, () => Buffer.from(pooledRandomBytes(12))); // 8,400 bytes: two refills
    const seen = new Set(slices.map((b) => b.toString('hex')));
    expect(seen.size).toBe(slices.length); // 96-bit slices: a repeat would mean reuse
    expect(pooledRandomBytes(5000)).toHaveLength(5000);
  });

  it('when a code names a path of the service in any case, then it is reserved', () => {
    expect(isReservedCode('docs')).toBe(true);
    expect(isReservedCode('HealthZ')).toBe(true);
    expect(isReservedCode('docs1')).toBe(false);
  });
});
