import * as oidc from 'openid-client';

/**
 * Why a sign-in did not end with an account (SPEC §23): every failure is a page that says what failed, with a
 * 4xx status — or 503 with Retry-After when the provider cannot be reached, which is no fault of the browser.
 */
export class SignInFailure extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 503,
    readonly title: string,
    message: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'SignInFailure';
  }
}

export const RETRY_AFTER_SECONDS = 30;

export const providerUnreachable = (what: string): SignInFailure =>
  new SignInFailure(
    503,
    'Sign-in provider unavailable',
    `The sign-in provider could not be reached (${what}). Try again in a minute.`,
    RETRY_AFTER_SECONDS,
  );

/** The most specific message of an error and its causes (openid-client wraps oauth4webapi's precise one). */
function innerMessage(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  const message = cause instanceof Error && cause.message ? cause.message : (err as Error).message;
  return String(message ?? 'unknown').slice(0, 300);
}

const isNetworkFault = (err: unknown): boolean => {
  const name = (err as { name?: string }).name;
  return err instanceof TypeError || name === 'TimeoutError' || name === 'AbortError';
};

/** Codes of openid-client for an answer that is not a proper one: the provider misbehaves, the browser cannot help. */
const PROVIDER_FAULTS = new Set([
  'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'OAUTH_RESPONSE_IS_NOT_JSON',
  'OAUTH_PARSE_ERROR',
  'OAUTH_INVALID_SERVER_METADATA',
  'OAUTH_MISSING_SERVER_METADATA',
]);

/** A failure of the provider's discovery document or JWKS: it cannot be used now. */
export function discoveryFailure(err: unknown): SignInFailure {
  return providerUnreachable(isNetworkFault(err) ? 'no answer' : innerMessage(err));
}

/**
 * A failure of the callback's exchange and checks, as openid-client reports it: the provider's own error
 * (an `error` parameter, or an error answer of the token endpoint such as `invalid_grant` for a code used
 * twice), an ID token that fails a check (signature, issuer, audience, expiry, nonce), or a provider that did
 * not answer properly (503).
 */
export function exchangeFailure(err: unknown): SignInFailure | null {
  if (err instanceof oidc.AuthorizationResponseError) {
    const description = err.error_description ? `: ${err.error_description.slice(0, 300)}` : '';
    return new SignInFailure(
      err.error === 'access_denied' ? 403 : 400,
      'Sign-in refused by the provider',
      `The sign-in provider answered "${err.error.slice(0, 64)}"${description}.`,
    );
  }
  if (err instanceof oidc.ResponseBodyError) {
    if (err.status >= 500) return providerUnreachable(`HTTP ${err.status}`);
    const description = err.error_description ? `: ${err.error_description.slice(0, 300)}` : '';
    return new SignInFailure(
      400,
      'Sign-in code refused',
      `The sign-in provider refused the code ("${err.error.slice(0, 64)}"${description}); a code works once. Sign in again.`,
    );
  }
  if (isNetworkFault(err)) return providerUnreachable('no answer');
  if (err instanceof oidc.ClientError) {
    if (err.code !== undefined && PROVIDER_FAULTS.has(err.code)) return providerUnreachable(innerMessage(err));
    return new SignInFailure(
      400,
      'Sign-in token rejected',
      `The identity token from the sign-in provider failed a check: ${innerMessage(err)}.`,
    );
  }
  return null;
}
