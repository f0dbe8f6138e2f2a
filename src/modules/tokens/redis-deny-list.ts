import type { Redis } from 'ioredis';
import type { TokenDenyList } from './tokens.repository.js';

/**
 * The deny list in Redis (scale-out): one key per revoked jti that expires with the token itself, so Redis
 * forgets it exactly when it stops mattering and every instance sees a revocation at once.
 */
export function createRedisDenyList(redis: Redis, now: () => number, prefix = 'ferry:revoked:'): TokenDenyList {
  return {
    async isRevoked(jti) {
      return (await redis.exists(prefix + jti)) === 1;
    },
    async revoke(jti, expiresAt) {
      const ttl = Math.max(1, expiresAt - now());
      return (await redis.set(prefix + jti, '1', 'PX', ttl, 'NX')) === 'OK';
    },
    async purgeExpired() {
      return 0; // keys expire by themselves
    },
  };
}
