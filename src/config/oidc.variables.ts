/**
 * Single sign-on through an OpenID provider (SPEC §23, docs/sign-in.md). Unset OIDC_ISSUER: no single sign-on
 * (GET /auth/oidc/login answers 404, the dashboard shows no button); the others only matter with it.
 */
import Type, { type TSchema } from 'typebox';
import { optional } from '../lib/env-variables.js';

export const oidcVariables = {
  OIDC_ISSUER: optional(
    Type.String({ pattern: '^https?://\\S+$', maxLength: 2048, must: 'be an absolute http(s) URL' }),
    {
      description:
        "The OpenID provider's issuer URL (its discovery document is `ISSUER/.well-known/openid-configuration`, fetched at the first sign-in, not at start). https, or http on a loopback address only; kept exactly as written, since the provider's `iss` must equal it (Authentik's ends with `/`). Unset: no single sign-on",
    },
  ),
  OIDC_CLIENT_ID: optional(Type.String({ minLength: 1, maxLength: 255 }), {
    description: 'The client id registered at the provider (required with `OIDC_ISSUER`)',
  }),
  OIDC_CLIENT_SECRET: optional(Type.String({ minLength: 1, maxLength: 512 }), {
    secret: true,
    description:
      "The client's secret, sent with HTTP Basic authentication to the token endpoint. Unset: a public client (PKCE alone)",
  }),
  OIDC_SCOPES: Type.String({
    default: 'openid profile email',
    pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,64}( [\\x21\\x23-\\x5B\\x5D-\\x7E]{1,64}){0,31}$',
    must: 'be scopes separated by single spaces (RFC 6749 §3.3), one of them openid',
    description: 'Scopes asked for, space-separated (must include `openid`; add `groups` where the provider needs it)',
  }),
  OIDC_USERNAME_CLAIM: Type.String({
    default: 'preferred_username',
    pattern: '^[A-Za-z0-9_:.-]{1,64}$',
    must: 'be a claim name of 1-64 characters of A-Z a-z 0-9 _ : . -',
    description:
      "The ID token's claim a new account's username is made from (cut to the username's characters and 32 of them; a taken name gets a number)",
  }),
  OIDC_GROUPS_CLAIM: Type.String({
    default: 'groups',
    pattern: '^[A-Za-z0-9_:./-]{1,128}$',
    must: 'be a claim name of 1-128 characters of A-Z a-z 0-9 _ : . / -',
    description: "The ID token's claim that lists the user's groups (an array of strings)",
  }),
  OIDC_ADMIN_GROUPS: Type.Array(Type.String(), {
    default: [],
    read: 'commaList',
    documentedDefault: 'none',
    description:
      'Comma-separated groups whose members are admins. Set: the role is applied from the groups claim at every sign-in (an admin outside them becomes a user, and their earlier tokens stop working). Unset: sign-in never changes a role',
  }),
  OIDC_DISPLAY_NAME: Type.String({
    default: 'single sign-on',
    minLength: 1,
    maxLength: 64,
    description: 'The provider\'s name on the dashboard\'s button: "Sign in with <OIDC_DISPLAY_NAME>"',
  }),
} satisfies Record<string, TSchema>;

/** Single sign-on needs a client id and `openid`, and an issuer nobody on the way can impersonate (TLS, or loopback). */
export function oidcProblems(v: {
  OIDC_ISSUER?: string | null;
  OIDC_CLIENT_ID?: string | null;
  OIDC_SCOPES?: string;
}): string[] {
  if (v.OIDC_ISSUER == null) return [];
  const problems: string[] = [];
  if (v.OIDC_CLIENT_ID === null) problems.push('OIDC_CLIENT_ID: must be set with OIDC_ISSUER');
  if (v.OIDC_SCOPES !== undefined && !v.OIDC_SCOPES.split(' ').includes('openid'))
    problems.push('OIDC_SCOPES: must include openid');
  let issuer: URL;
  try {
    issuer = new URL(v.OIDC_ISSUER);
  } catch {
    return [...problems, 'OIDC_ISSUER: must be an absolute https URL'];
  }
  const loopback = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(issuer.hostname);
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && loopback))
    problems.push('OIDC_ISSUER: must be an https URL (http only on a loopback address)');
  return problems;
}
