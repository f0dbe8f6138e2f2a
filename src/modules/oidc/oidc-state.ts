import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What a sign-in started by GET /auth/oidc/login must find again at the callback, kept in the browser that
 * started it (SPEC §23; the service stays stateless, SPEC §1): the `state` the provider echoes, the `nonce` the ID
 * token must carry and the PKCE verifier of the code. It travels as a cookie that is HttpOnly, SameSite=Lax (the
 * provider's redirect back is a top-level GET, which Lax lets through), limited to /auth/oidc and to
 * STATE_TTL_MS, and signed with a key derived from the JWT secret, so another instance sharing that secret
 * accepts it and nobody can make one up.
 */
export interface SignInState {
  state: string;
  nonce: string;
  verifier: string;
  /** epoch ms after which the callback refuses it */
  expiresAt: number;
}

export const STATE_COOKIE = 'ferry_oidc';
/** Time to sign in at the provider (a password manager, a second factor, a slow page). */
export const STATE_TTL_MS = 10 * 60_000;

export type StateSealer = ReturnType<typeof createStateSealer>;

export function createStateSealer(jwtSecret: Uint8Array) {
  // A key of its own: a state cookie's MAC is never something the JWT check would accept, nor the other way round.
  const key = createHmac('sha256', jwtSecret).update('ferry oidc state cookie v1').digest();
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();
  return {
    seal(value: SignInState): string {
      const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },

    /** The state, when the cookie is one this service made and has not expired; otherwise null. */
    open(cookie: string | undefined, now: number): SignInState | null {
      if (!cookie || cookie.length > 2048) return null;
      const [payload, signature, extra] = cookie.split('.');
      if (!payload || !signature || extra !== undefined) return null;
      const given = Buffer.from(signature, 'base64url');
      const expected = mac(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      try {
        const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SignInState;
        if (typeof value.expiresAt !== 'number' || value.expiresAt <= now) return null;
        if (![value.state, value.nonce, value.verifier].every((s) => typeof s === 'string' && s.length > 0))
          return null;
        return value;
      } catch {
        return null;
      }
    },
  };
}

/** The value of one cookie of a Cookie header (RFC 6265 §5.4), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Equal strings, compared in constant time. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
