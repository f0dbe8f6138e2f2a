import { createHmac, randomBytes } from 'node:crypto';
import { randomAlphanumeric } from '../../lib/random-text.js';

/**
 * The key a client holds: `fry_` and 40 characters of 0-9a-zA-Z drawn without bias from the operating
 * system's CSPRNG (about 238 bits). The `fry_` prefix lets secret scanners find leaked keys and lets the auth
 * hook tell a key from a JWT without parsing either.
 */
export const KEY_PREFIX = 'fry_';
const RANDOM_LENGTH = 40;
/** The characters after `fry_` that are stored and shown, so people can tell their keys apart. */
const SHOWN_LENGTH = 8;
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9a-zA-Z]{${RANDOM_LENGTH}}$`);

export interface NewKey {
  key: string;
  prefix: string;
}

export function generateApiKey(random: (n: number) => Buffer = randomBytes): NewKey {
  const body = randomAlphanumeric(RANDOM_LENGTH, random);
  return { key: `${KEY_PREFIX}${body}`, prefix: body.slice(0, SHOWN_LENGTH) };
}

/**
 * What is stored instead of the key: HMAC-SHA-256 under a server-side key (derived from JWT_SECRET in app.ts).
 * A slow password hash (scrypt) buys nothing for 238 random bits, which no one can guess whatever the hash
 * costs, and would cost milliseconds on every request made with a key; the HMAC costs about a microsecond.
 * Keyed, so that a copy of the database alone does not even let anyone test a candidate key. Looked up by
 * equality under a unique index: a timing difference there tells about stored hashes, not about keys.
 */
export function apiKeyHasher(serverKey: Uint8Array) {
  return (key: string): string | null =>
    KEY_SHAPE.test(key) ? createHmac('sha256', serverKey).update(key).digest('hex') : null;
}

export type ApiKeyHasher = ReturnType<typeof apiKeyHasher>;
