import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Clock } from '../../lib/clock.js';
import type { OidcProvider } from './oidc-provider.js';
import { readCookie, sameText, STATE_COOKIE, STATE_TTL_MS, type SignInState, type StateSealer } from './oidc-state.js';
import type { OidcAccounts } from './oidc.service.js';
import { SignInFailure } from './sign-in-failure.js';
import { SIGN_IN_PAGE_CSP, signInFailurePage } from './sign-in-page.js';

export interface OidcRoutesOptions {
  provider: OidcProvider;
  accounts: OidcAccounts;
  sealer: StateSealer;
  clock: Clock;
  /** whether PUBLIC_BASE_URL is https: then the cookie is Secure */
  secureCookie: boolean;
}

const COOKIE_PATH = '/auth/oidc';

/**
 * GET /auth/oidc/login and /auth/oidc/callback (SPEC §23): browser pages at the root, not the JSON API (so not in
 * the OpenAPI document). Neither is ever cached, and neither sends a Referer onward: the callback's address holds
 * the provider's code, and the dashboard's holds the login code.
 */
export const oidcRoutes: FastifyPluginAsync<OidcRoutesOptions> = async (app, opts) => {
  const { provider, accounts, sealer, clock } = opts;
  const cookie = (value: string, maxAgeSeconds: number) =>
    `${STATE_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${opts.secureCookie ? '; Secure' : ''}`;

  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  });

  const failurePage = (reply: FastifyReply, failure: SignInFailure) => {
    if (failure.retryAfterSeconds !== null) reply.header('retry-after', String(failure.retryAfterSeconds));
    return reply
      .code(failure.status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', SIGN_IN_PAGE_CSP)
      .header('x-content-type-options', 'nosniff')
      .send(signInFailurePage(failure.title, failure.message));
  };

  app.get(`${COOKIE_PATH}/login`, { schema: { hide: true } }, async (request, reply) => {
    try {
      const { url, state } = await provider.start();
      return reply.header('set-cookie', cookie(sealer.seal(state), Math.floor(STATE_TTL_MS / 1000))).redirect(url, 302);
    } catch (err) {
      if (err instanceof SignInFailure) {
        request.log.warn({ reason: err.message }, 'single sign-on could not start');
        return failurePage(reply, err);
      }
      throw err;
    }
  });

  app.get(`${COOKIE_PATH}/callback`, { schema: { hide: true } }, async (request, reply) => {
    // Whatever happens next, the state is spent: a second use of this callback finds no cookie.
    reply.header('set-cookie', cookie('', 0));
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    try {
      const state = checkedState(
        new URLSearchParams(query),
        sealer.open(readCookie(request.headers.cookie, STATE_COOKIE), clock.now()),
      );
      const claims = await provider.finish(query, state);
      const code = await accounts.signIn(claims);
      return reply.redirect(`/app/?login_code=${encodeURIComponent(code)}`, 302);
    } catch (err) {
      if (err instanceof SignInFailure) {
        request.log.info({ status: err.status, reason: err.message }, 'single sign-on refused');
        return failurePage(reply, err);
      }
      throw err;
    }
  });
};

/** The browser's state, when the callback's `state` is the one it started with; a SignInFailure otherwise. */
function checkedState(params: URLSearchParams, state: SignInState | null): SignInState {
  const error = params.get('error');
  if (!state) {
    // A provider's error with no sign-in of this browser's: the provider's word is still the useful one.
    throw new SignInFailure(
      400,
      'Sign-in expired or not started here',
      error
        ? `The sign-in provider answered "${error.slice(0, 64)}", and this browser has no sign-in in progress.`
        : 'This browser has no sign-in in progress (it took longer than 10 minutes, cookies are blocked, or the link was opened elsewhere). Start again.',
    );
  }
  const returned = params.get('state');
  if (returned === null || !sameText(returned, state.state))
    throw new SignInFailure(
      400,
      'Sign-in state mismatch',
      'The answer from the sign-in provider does not belong to the sign-in this browser started (wrong or missing state). Start again.',
    );
  return state;
}

/** Without OIDC_ISSUER the paths exist but say so: 404 pages rather than the JSON 404 of an unknown route. */
export const oidcOffRoutes: FastifyPluginAsync = async (app) => {
  const off = new SignInFailure(
    404,
    'Single sign-on is not set up',
    'This instance has no single sign-on (OIDC_ISSUER is not set).',
  );
  for (const path of [`${COOKIE_PATH}/login`, `${COOKIE_PATH}/callback`])
    app.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .code(404)
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', SIGN_IN_PAGE_CSP)
        .header('cache-control', 'no-store')
        .send(signInFailurePage(off.title, off.message)),
    );
};
