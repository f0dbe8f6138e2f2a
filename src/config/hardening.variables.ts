/**
 * The variables of the hardening issues: imports and domain checks that cannot hurt an instance (SPEC §25),
 * and faults and abuse (SPEC §17).
 */
import Type, { type TSchema } from 'typebox';
import { flag, int, optional } from '../lib/env-variables.js';

export const hardeningVariables = {
  // Imports that cannot hurt an instance (SPEC §25, docs/migrating.md).
  IMPORT_MAX_RESPONSE_BYTES: int(
    10 * 1024 * 1024,
    1024,
    1024 * 1024 * 1024,
    'Largest answer an importer reads from a source API (Shlink, Kutt, Bitly); a larger one fails the import with a clear error, as does one slower than 30 s',
  ),
  DOMAIN_VERIFY_ALLOW_PRIVATE: flag(
    false,
    '`true`: the HTTP proof of a domain may connect to loopback, private, link-local, CGNAT ' +
      'and multicast addresses (tests, instances on a private network). `false`: such an address is refused ("address not allowed")',
  ),
  // Faults and abuse (SPEC §17, docs/operating.md).
  PASSWORD_HASHES_PER_MINUTE: int(
    30,
    1,
    100_000,
    'Password hashes (scrypt) a caller (user, API key, or client address without a token) may cause per minute: sign-up, login, password changes, link passwords, link unlocks. Past it 429 `RATE_LIMITED`, before any hashing; shared in Redis with `REDIS_URL`',
  ),
  METRICS_TOKEN: optional(
    Type.String({
      minLength: 16,
      maxLength: 256,
      pattern: '^[\\x21-\\x7e]+$',
      must: 'be 16-256 printable ASCII characters without spaces',
    }),
    {
      secret: true,
      description:
        'Set: `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). Unset: `/metrics` is open',
    },
  ),
} satisfies Record<string, TSchema>;
