import type { IDToken } from 'openid-client';

/**
 * What a new account is made of, read from the ID token's claims. The username comes from OIDC_USERNAME_CLAIM
 * (an e-mail-like value gives its local part), else the e-mail's local part, else `user`; it is cut to SPEC §3's
 * characters and 32 of them, and padded to 3. It is only a starting point: a taken one gets a number.
 */
export function baseUsername(claims: IDToken, usernameClaim: string): string {
  const candidates = [claims[usernameClaim], claims.email];
  for (const value of candidates) {
    if (typeof value !== 'string') continue;
    const local = value.includes('@') ? value.slice(0, value.indexOf('@')) : value;
    const clean = local
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9._-]/g, '')
      .slice(0, 32);
    if (clean.length > 0) return clean.padEnd(3, '_');
  }
  return 'user';
}

/** The n-th choice of username: the base, then base2, base3 … (the base cut so the whole stays 32 characters). */
export function usernameChoice(base: string, n: number): string {
  if (n === 1) return base;
  const suffix = String(n);
  return base.slice(0, 32 - suffix.length) + suffix;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

/** The e-mail a new account may take from the provider: a plausible one the provider did not say is unverified. */
export function providedEmail(claims: IDToken): string | null {
  const email = claims.email;
  if (typeof email !== 'string' || email.length > 254 || !EMAIL.test(email)) return null;
  return claims.email_verified === false ? null : email;
}

/** The account's display name, if the provider gives one. */
export function providedName(claims: IDToken): string | null {
  const name = typeof claims.name === 'string' ? claims.name.replace(/\p{Cc}/gu, '').trim() : '';
  return name ? name.slice(0, 200) : null;
}

/** The groups claim as a list of strings: an array of them, or one string; anything else is no groups. */
export function groupsOf(claims: IDToken, groupsClaim: string): string[] {
  const value = claims[groupsClaim];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string') : [];
}
