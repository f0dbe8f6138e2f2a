import * as oidc from 'openid-client';
import type { Clock } from '../../lib/clock.js';
import { discoveryFailure, exchangeFailure } from './sign-in-failure.js';
import type { SignInState } from './oidc-state.js';
import { STATE_TTL_MS } from './oidc-state.js';

export interface ProviderSettings {
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  scopes: string;
  /** PUBLIC_BASE_URL + /auth/oidc/callback, as registered at the provider */
  redirectUri: string;
}

/** Each request to the provider (discovery, JWKS, token endpoint) gives up after this; then 503. */
const REQUEST_TIMEOUT_SECONDS = 10;
/** The discovery document is fetched again after this, at the next sign-in; a failed refresh keeps the old one. */
const DISCOVERY_MAX_AGE_MS = 60 * 60_000;
/** Clock skew accepted on the ID token's `iat`/`exp`/`nbf` (docs/sign-in.md: what a wrong clock breaks). */
export const ID_TOKEN_CLOCK_TOLERANCE_SECONDS = 60;

const isLoopback = (url: URL) => /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(url.hostname);

export type OidcProvider = ReturnType<typeof createOidcProvider>;

/**
 * The OpenID provider as openid-client (the certified relying-party library) sees it: every protocol check —
 * the discovery document's issuer, PKCE, state, the ID token's signature through the provider's JWKS, issuer,
 * audience, expiry and nonce, RFC 9207's `iss` parameter when the provider sends one — is the library's; this
 * file only decides when the provider is asked and what a failure means for the browser.
 *
 * The discovery document is fetched at the first sign-in (never at start-up: the app starts while the provider
 * is down), kept for an hour, and fetched again only when a sign-in needs it; a failure is not remembered, so the
 * next sign-in tries again. http is allowed only for an issuer on a loopback address (config.ts refuses others).
 */
function createDiscovery(settings: ProviderSettings, clock: Clock): () => Promise<oidc.Configuration> {
  const issuerUrl = new URL(settings.issuer);
  let cached: { config: oidc.Configuration; at: number } | null = null;
  let pending: Promise<oidc.Configuration> | null = null;

  const discover = (): Promise<oidc.Configuration> => {
    pending ??= oidc
      .discovery(
        issuerUrl,
        settings.clientId,
        { redirect_uris: [settings.redirectUri], [oidc.clockTolerance]: ID_TOKEN_CLOCK_TOLERANCE_SECONDS },
        settings.clientSecret === null ? oidc.None() : oidc.ClientSecretBasic(settings.clientSecret),
        {
          timeout: REQUEST_TIMEOUT_SECONDS,
          ...(isLoopback(issuerUrl) && issuerUrl.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      )
      .then((config) => {
        config.timeout = REQUEST_TIMEOUT_SECONDS;
        // OpenID Connect lets a client trust an ID token from the token endpoint on TLS alone (Core §3.1.3.7), and
        // openid-client does so by default; SPEC §23 asks for the signature too, checked against the provider's JWKS.
        oidc.enableNonRepudiationChecks(config);
        cached = { config, at: clock.now() };
        return config;
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  };

  return async function configuration(): Promise<oidc.Configuration> {
    if (cached && clock.now() - cached.at < DISCOVERY_MAX_AGE_MS) return cached.config;
    try {
      return await discover();
    } catch (err) {
      if (cached) return cached.config; // a provider briefly down keeps working with what it said last
      throw discoveryFailure(err);
    }
  };
}

export function createOidcProvider(settings: ProviderSettings, clock: Clock) {
  const configuration = createDiscovery(settings, clock);
  return {
    /** Where to send the browser, and what its cookie must carry back. */
    async start(): Promise<{ url: string; state: SignInState }> {
      const config = await configuration();
      const verifier = oidc.randomPKCECodeVerifier();
      const state: SignInState = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        verifier,
        expiresAt: clock.now() + STATE_TTL_MS,
      };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope: settings.scopes,
        response_type: 'code',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: state.state,
        nonce: state.nonce,
      });
      return { url: url.href, state };
    },

    /**
     * The callback's query checked against the browser's state, the code exchanged, the ID token validated:
     * its claims. Throws a SignInFailure for anything the provider or the token got wrong.
     */
    async finish(query: string, state: SignInState): Promise<oidc.IDToken> {
      const config = await configuration();
      let claims: oidc.IDToken | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(
          config,
          new URL(`${settings.redirectUri}?${query}`),
          {
            pkceCodeVerifier: state.verifier,
            expectedState: state.state,
            expectedNonce: state.nonce,
            idTokenExpected: true,
          },
          { redirect_uri: settings.redirectUri },
        );
        claims = tokens.claims();
      } catch (err) {
        throw exchangeFailure(err) ?? err;
      }
      if (!claims)
        throw exchangeFailure(new oidc.ClientError('the provider sent no ID token')) ?? new Error('no ID token');
      return claims;
    },
  };
}
