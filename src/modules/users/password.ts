import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { HashLanes } from '../../infra/hash-lanes.js';

const scryptNow = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );

const KEYLEN = 32;

export interface PasswordHasher {
  /** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash so they can be raised later. */
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
  /**
   * A hash of nothing anyone knows, checked when the username does not exist, so that a wrong username costs
   * the same scrypt work as a wrong password (no user-enumeration by timing).
   */
  decoy(): Promise<string>;
  /** Whether a stored hash was made with other parameters than this hasher's (then a login rehashes it). */
  isOutdated(stored: string): boolean;
}

/**
 * scrypt with N = 2^cost, r = 8, p = 1 and a 16-byte salt. The default cost 15 (32 MiB, OWASP's scrypt
 * floor is N=2^17 at 128 MiB; we trade that for 2-core machines) is PASSWORD_HASH_COST. It runs on
 * libuv's thread pool, so hashing does not block the event loop; with `lanes`, a bounded number at once,
 * shared fairly between requests (infra/hash-lanes.ts).
 */
export function createPasswordHasher(cost: number, lanes?: Pick<HashLanes, 'schedule'>): PasswordHasher {
  const scrypt = lanes
    ? (...args: Parameters<typeof scryptNow>) => lanes.schedule(() => scryptNow(...args))
    : scryptNow;
  const params = { N: 2 ** cost, r: 8, p: 1 };
  const maxmem = 256 * params.N * params.r + 1024 * 1024;
  let decoy: Promise<string> | null = null;
  const hasher: PasswordHasher = {
    async hash(password) {
      const salt = randomBytes(16);
      const key = await scrypt(password, salt, KEYLEN, { ...params, maxmem });
      return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
    },
    async verify(password, stored) {
      const [scheme, n, r, p, salt, hash] = stored.split('$');
      if (scheme !== 'scrypt' || !salt || !hash) return false;
      const N = Number(n);
      const expected = Buffer.from(hash, 'base64url');
      const key = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
        N,
        r: Number(r),
        p: Number(p),
        maxmem: 256 * N * Number(r) + 1024 * 1024,
      });
      return timingSafeEqual(key, expected);
    },
    isOutdated(stored) {
      const [scheme, n, r, p] = stored.split('$');
      return scheme !== 'scrypt' || Number(n) !== params.N || Number(r) !== params.r || Number(p) !== params.p;
    },
    decoy() {
      decoy ??= hasher.hash(randomBytes(16).toString('hex'));
      return decoy;
    },
  };
  return hasher;
}
