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

/** Verified tokens remembered (see verify); about 0.5 KB each. */
const VERIFIED_TOKENS = 10_000;

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
  const verified = new Map<string, AccessClaims>();
  return {
    async sign(claims: AccessClaims): Promise<string> {
      return new SignJWT({ user_id: claims.user_id, role: claims.role })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt(claims.iat)
        .setExpirationTime(claims.exp)
        .setJti(claims.jti)
        .sign(await key);
    },

    /**
     * Resolves with the claims of a valid token; rejects for anything else.
     *
     * A token whose signature and claims were verified is remembered by its exact text, so that the next
     * check of the same string (the rate limiter and the auth hook both verify each request's token; a client
     * sends one token many times) skips the HMAC and JSON work. Only the time can change the verdict on the
     * same text, so a remembered token still answers only while `exp` (with the leeway) is ahead of the clock;
     * after that it is verified afresh, which rejects it as expired. Revocation and the user's state are
     * checked by the caller on every request (tokens.service.ts), never remembered here.
     */
    async verify(token: string): Promise<AccessClaims> {
      const known = verified.get(token);
      if (known !== undefined) {
        if (known.exp > Math.floor(clock.now() / 1000) - LEEWAY_SECONDS) return known;
        verified.delete(token);
      }
      const { payload } = await jwtVerify(token, await key, {
        algorithms: ['HS256'],
        typ: 'JWT',
        clockTolerance: LEEWAY_SECONDS,
        requiredClaims: ['exp', 'iat', 'jti'],
        currentDate: new Date(clock.now()),
      });
      const { user_id: userId, role, jti, iat, exp } = payload as Partial<AccessClaims>;
      if (
        !Number.isSafeInteger(userId) ||
        (userId as number) < 1 ||
        typeof role !== 'string' ||
        typeof jti !== 'string' ||
        jti.length > 64
      ) {
        throw new Error('token claims are malformed');
      }
      const claims: AccessClaims = Object.freeze({
        user_id: userId as number,
        role,
        jti,
        iat: iat as number,
        exp: exp as number,
      });
      if (verified.size >= VERIFIED_TOKENS) verified.clear(); // bounded; forgetting costs one verification each
      verified.set(token, claims);
      return claims;
    },
  };
}

export type Jwt = ReturnType<typeof createJwt>;
