import { randomFillSync } from 'node:crypto';

/** SPEC §6: codes are 0-9a-zA-Z, case-sensitive; generated ones are 8 characters long. */
export const CODE_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const GENERATED_CODE_LENGTH = 8;
export const CODE_PATTERN = '^[0-9a-zA-Z]{1,8}$';
const CODE_REGEX = new RegExp(CODE_PATTERN);

// Rejection sampling: a byte is used only when it is below 248 = 4 * 62, so `byte % 62` is exactly uniform.
// (Taking every byte modulo 62 would make the first 8 characters 5/4 as likely as the others.)
const ACCEPT_BELOW = 256 - (256 % CODE_ALPHABET.length);

/**
 * Bytes from the operating system's CSPRNG, drawn 4 KiB at a time and each handed out once: one call into
 * the kernel per ~340 codes instead of one per code (a few percent of a link creation; bench/ link-create).
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

/**
 * A code drawn uniformly from the alphabet by the operating system's CSPRNG. 62^8 ≈ 2.2e14 codes: at a
 * million links the chance that a new code collides is about 5e-9, and a collision is simply retried.
 * `random` is injectable for tests only in the sense of "any byte source"; production uses pooledRandomBytes.
 */
export function generateCode(length = GENERATED_CODE_LENGTH, random: (n: number) => Buffer = pooledRandomBytes): string {
  let code = '';
  while (code.length < length) {
    // 1.03 bytes are needed per character on average; ask for a few more to rarely loop.
    for (const byte of random(length + 4)) {
      if (byte >= ACCEPT_BELOW) continue;
      code += CODE_ALPHABET[byte % CODE_ALPHABET.length];
      if (code.length === length) break;
    }
  }
  return code;
}

export const isWellFormedCode = (code: string): boolean => CODE_REGEX.test(code);

/**
 * First path segments the service uses or may use (SPEC §6). Compared ignoring case: routes are
 * case-sensitive, but a link at /Docs next to /docs would only confuse people.
 */
export const RESERVED_CODES: ReadonlySet<string> = new Set([
  'api', 'app', 'docs', 'v1', 'v2', 'v3', 'healthz', 'readyz', 'livez', 'metrics', 'openapi', 'swagger', 'static',
  'assets', 'favicon', 'robots', 'sitemap', 'admin', 'login', 'logout', 'status', 'health', 'links', 'users',
]);

export const isReservedCode = (code: string): boolean => RESERVED_CODES.has(code.toLowerCase());
