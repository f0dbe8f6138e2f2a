import { randomFillSync } from 'node:crypto';

/** The 62 characters of short codes and API keys: 0-9 a-z A-Z. */
export const ALPHANUMERIC = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

// Rejection sampling: a byte is used only when it is below 248 = 4 * 62, so `byte % 62` is exactly uniform.
// (Taking every byte modulo 62 would make the first 8 characters 5/4 as likely as the others.)
const ACCEPT_BELOW = 256 - (256 % ALPHANUMERIC.length);

/**
 * Bytes from the operating system's CSPRNG, drawn 4 KiB at a time and each handed out once: one call into
 * the kernel per ~340 short codes instead of one per code (a few percent of a link creation; bench/ link-create).
 */
const pool = Buffer.alloc(4096);
let used = pool.length;
export function pooledRandomBytes(n: number): Buffer {
  if (n > pool.length) return randomFillSync(Buffer.alloc(n));
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += n;
  return pool.subarray(used - n, used);
}

/** `length` characters drawn uniformly from 0-9a-zA-Z by `random` (a CSPRNG byte source), with no modulo bias. */
export function randomAlphanumeric(length: number, random: (n: number) => Buffer = pooledRandomBytes): string {
  let text = '';
  while (text.length < length) {
    // 1.03 bytes are needed per character on average; ask for a few more to rarely loop.
    for (const byte of random(length + 4)) {
      if (byte >= ACCEPT_BELOW) continue;
      text += ALPHANUMERIC[byte % ALPHANUMERIC.length];
      if (text.length === length) break;
    }
  }
  return text;
}
