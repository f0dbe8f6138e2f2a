import { SignJWT, jwtVerify } from 'jose';
import type { Clock } from '../../lib/clock.js';

export interface AccessClaims {
  user_id: number;
  role: string;
  jti: string;
  iat: number;
  exp: number;
}

/** Clock skew tolerated on `exp` (SPEC §4: at most 30 s). */
export const LEEWAY_SECONDS = 30;

/**
 * HS256 only (RFC 8725 §3.1): the verifier names the one algorithm it accepts, so `alg: none`, RS/ES
 * algorithms and HS384/512 are rejected before the signature is looked at. `typ` must be JWT (§3.11).
 */
export function createJwt(secret: Uint8Array, clock: Clock) {
  // Imported once: given the raw bytes, jose imports a WebCrypto key for every sign and verify, which was a
  // fifth of an authenticated read's CPU (node --cpu-prof, bench/ user-read). Usable for HS256 only.
  const key = crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  // Not awaited by anyone before the first token: keep a failure from surfacing as an unhandled rejection.
  key.catch(() => undefined);
  return {
    async sign(claims: AccessClaims): Promise<string> {
      return new SignJWT({ user_id: claims.user_id, role: claims.role })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt(claims.iat)
        .setExpirationTime(claims.exp)
        .setJti(claims.jti)
        .sign(await key);
    },

    /** Resolves with the claims of a valid token; rejects for anything else. */
    async verify(token: string): Promise<AccessClaims> {
      const { payload } = await jwtVerify(token, await key, {
        algorithms: ['HS256'],
        typ: 'JWT',
        clockTolerance: LEEWAY_SECONDS,
        requiredClaims: ['exp', 'iat', 'jti'],
        currentDate: new Date(clock.now()),
      });
      const { user_id: userId, role, jti, iat, exp } = payload as Partial<AccessClaims>;
      if (!Number.isSafeInteger(userId) || (userId as number) < 1 || typeof role !== 'string' || typeof jti !== 'string' || jti.length > 64) {
        throw new Error('token claims are malformed');
      }
      return { user_id: userId as number, role, jti, iat: iat as number, exp: exp as number };
    },
  };
}

export type Jwt = ReturnType<typeof createJwt>;
