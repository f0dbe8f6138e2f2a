import type { Redis } from 'ioredis';
import { AppError } from '../../lib/app-error.js';
import type { TokenDenyList } from './tokens.repository.js';

/**
 * The deny list in Redis (scale-out): one key per revoked jti that expires with the token itself, so Redis
 * forgets it exactly when it stops mattering and every instance sees a revocation at once.
 *
 * While Redis is unreachable it fails closed: a request that presents a token (and a revocation) is answered
 * 503 SERVICE_UNAVAILABLE with Retry-After, because "not revoked" cannot be known, and a token its owner
 * revoked (logged out, or reported stolen) must not work again just because Redis is down. Anonymous requests
 * and redirects are unaffected; it recovers with the connection (docs/deployment.md).
 */
const unavailable = (err: unknown): AppError => {
  const error = new AppError(
    'SERVICE_UNAVAILABLE',
    'Token revocations cannot be checked right now; retry shortly',
    [],
    { 'Retry-After': '5' },
  );
  (error as { cause?: unknown }).cause = err;
  return error;
};

export function createRedisDenyList(redis: Redis, now: () => number, prefix = 'ferry:revoked:'): TokenDenyList {
  return {
    async isRevoked(jti) {
      try {
        return (await redis.exists(prefix + jti)) === 1;
      } catch (err) {
        throw unavailable(err);
      }
    },
    async revoke(jti, expiresAt) {
      const ttl = Math.max(1, expiresAt - now());
      try {
        return (await redis.set(prefix + jti, '1', 'PX', ttl, 'NX')) === 'OK';
      } catch (err) {
        throw unavailable(err);
      }
    },
    async purgeExpired() {
      return 0; // keys expire by themselves
    },
  };
}
