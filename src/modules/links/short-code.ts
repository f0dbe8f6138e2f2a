import { ALPHANUMERIC, pooledRandomBytes, randomAlphanumeric } from '../../lib/random-text.js';

export { pooledRandomBytes };
export { CODE_PATTERN } from '../../lib/link-code.js';

/** SPEC §6: codes are 0-9a-zA-Z, case-sensitive; generated ones are 8 characters long. */
export const CODE_ALPHABET = ALPHANUMERIC;
export const GENERATED_CODE_LENGTH = 8;

/**
 * A code drawn uniformly from the alphabet by the operating system's CSPRNG (lib/random-text.ts). 62^8 ≈ 2.2e14
 * codes: at a million links the chance that a new code collides is about 5e-9, and a collision is simply retried.
 * `random` is injectable for tests only in the sense of "any byte source"; production uses pooledRandomBytes.
 */
export function generateCode(
  length = GENERATED_CODE_LENGTH,
  random: (n: number) => Buffer = pooledRandomBytes,
): string {
  return randomAlphanumeric(length, random);
}

/**
 * First path segments the service uses or may use (SPEC §6). Compared ignoring case: routes are
 * case-sensitive, but a link at /Docs next to /docs would only confuse people.
 */
export const RESERVED_CODES: ReadonlySet<string> = new Set([
  'api',
  'app',
  'docs',
  'v1',
  'v2',
  'v3',
  'healthz',
  'readyz',
  'livez',
  'metrics',
  'openapi',
  'swagger',
  'static',
  'assets',
  'favicon',
  'robots',
  'sitemap',
  'admin',
  'login',
  'logout',
  'status',
  'health',
  'links',
  'users',
]);

export const isReservedCode = (code: string): boolean => RESERVED_CODES.has(code.toLowerCase());
