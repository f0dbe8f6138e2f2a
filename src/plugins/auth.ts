import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, forbidden, InvalidTokenError } from '../lib/app-error.js';
import type { Caller } from '../lib/caller.js';
import { ErrorEnvelopeSchema, ref } from '../lib/common.schemas.js';
import type { Scope } from '../lib/scopes.js';
import { resolveMe } from '../lib/user-path.js';
import { declareResponseHeaders } from './response-headers.js';

/**
 * Authentication says who, authorization says what (SPEC §4, §14). A route declares its policy, and the scope
 * an API key needs for it, once: `onRequest: app.access('selfOrAdmin', 'links:read')`. That one declaration is
 * enforced here, before the body is read (a caller without the right credential learns nothing about
 * validation rules or data), and becomes the operation's `security` in the OpenAPI document (onRoute below).
 *
 * - `optional`: anonymous is fine; a credential that is sent must be valid.
 * - `user`: any valid credential.
 * - `admin`: an admin's credential.
 * - `selfOrAdmin`: the user named by the `:id` path parameter, or an admin. Another user gets 403 whether or
 *   not that id exists (no existence oracle). `:id` may be `me`, the caller (lib/user-path.ts).
 *
 * Credentials: `Authorization: Bearer <JWT>` or `Bearer fry_…` (an API key). A key acts as its user, with the
 * user's current role and status, and only within its scopes: outside them 403 INSUFFICIENT_SCOPE with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1). A route that names no scope
 * is for JWTs only (creating and revoking keys and tokens, changing a user): a key gets 403 FORBIDDEN there.
 * The scope is checked before role and ownership, so a key learns nothing beyond its scopes.
 */
export type AccessPolicy = 'optional' | 'user' | 'admin' | 'selfOrAdmin';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
    /** the request's credential, checked once (the rate limiter and the access hook both ask) */
    authentication: Promise<Caller | null> | null;
  }
  interface FastifyContextConfig {
    /** open to an admin who has not set up two-factor sign-in while TOTP_REQUIRED_FOR_ADMINS=true (its set-up) */
    withoutTotp?: boolean;
  }
  interface FastifyInstance {
    access(policy: AccessPolicy, scope?: Scope): onRequestAsyncHookHandler;
    /** Who the request's bearer credential stands for (null: none sent); rejects with 401 for a bad one. */
    authenticate(request: FastifyRequest): Promise<Caller | null>;
  }
}

export interface Authenticators {
  /** a JWT (modules/tokens) */
  token(token: string): Promise<Caller>;
  /** an API key, `fry_…` (modules/api-keys) */
  apiKey(key: string): Promise<Caller>;
  /**
   * TOTP_REQUIRED_FOR_ADMINS (SPEC §23): whether this admin has two-factor sign-in on (modules/two-factor).
   * Absent: not required. Asked of admins only, on routes other than the set-up's (`config.withoutTotp`).
   */
  adminHasTotp?: (userId: number) => Promise<boolean>;
}

const REALM = 'Bearer realm="ferry"';
const API_KEY_PREFIX = 'fry_';
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

const unauthenticated = (message: string, tokenSent: boolean): AppError =>
  new AppError('UNAUTHENTICATED', message, [], {
    'WWW-Authenticate': tokenSent ? `${REALM}, error="invalid_token", error_description="${message}"` : REALM,
  });

const insufficientScope = (scope: Scope): AppError =>
  new AppError('INSUFFICIENT_SCOPE', `This API key lacks the scope ${scope}`, [], {
    'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
  });

const totpSetupRequired = (): AppError =>
  new AppError(
    'TOTP_SETUP_REQUIRED',
    'This instance requires admins to sign in with two factors: set it up first (POST /api/v1/users/me/totp)',
  );

/** The bearer credential of an Authorization header, or undefined when there is none of that form. */
export const bearerCredential = (header: string | undefined): string | undefined =>
  header === undefined ? undefined : BEARER.exec(header)?.[1];
export const isApiKeyCredential = (credential: string): boolean => credential.startsWith(API_KEY_PREFIX);

/** The OpenAPI `security` of a policy: the JWT scheme, plus the API-key scheme with its scope where keys may act. */
export function securityFor(policy: AccessPolicy, scope?: Scope): Array<Record<string, string[]>> {
  const schemes: Array<Record<string, string[]>> = [{ bearerAuth: [] }];
  if (scope) schemes.push({ apiKey: [scope] });
  return policy === 'optional' ? [{}, ...schemes] : schemes;
}

const kAccess = Symbol('ferry.access');
type AccessHook = onRequestAsyncHookHandler & { [kAccess]?: { policy: AccessPolicy; scope?: Scope } };

/** The operation's security and the 403 a refused key gets, from the route's access hook. */
function documentAccess(route: RouteOptions): void {
  const hooks = [route.onRequest ?? []].flat() as AccessHook[];
  const rule = hooks.find((h) => h[kAccess])?.[kAccess];
  if (!rule || !route.schema) return;
  const schema = route.schema as { security?: unknown; response?: Record<string, unknown> };
  schema.security = securityFor(rule.policy, rule.scope);
  if (!schema.response) return;
  schema.response[403] ??= ref(ErrorEnvelopeSchema);
  if (rule.scope) declareResponseHeaders(route, ['WWW-Authenticate'], (status) => status === '403');
}

async function authPlugin(app: FastifyInstance, opts: { authenticators: Authenticators }): Promise<void> {
  app.decorateRequest('caller', null);
  app.decorateRequest('authentication', null);

  async function identify(request: FastifyRequest): Promise<Caller | null> {
    const header = request.headers.authorization;
    if (header === undefined) return null;
    // RFC 6750 §3.1: credentials of another scheme (Basic, …) carry no bearer token, so the challenge has no
    // error code; error="invalid_token" is for a bearer token that was sent and refused.
    if (!/^Bearer(\s|$)/i.test(header)) throw unauthenticated('A bearer token is required', false);
    const credential = bearerCredential(header);
    if (!credential) throw unauthenticated('The Authorization header must be "Bearer <token>"', true);
    try {
      return await (isApiKeyCredential(credential)
        ? opts.authenticators.apiKey(credential)
        : opts.authenticators.token(credential));
    } catch (err) {
      if (err instanceof InvalidTokenError) throw unauthenticated(err.message, true);
      throw err;
    }
  }

  app.decorate('authenticate', (request: FastifyRequest) => (request.authentication ??= identify(request)));

  const { adminHasTotp } = opts.authenticators;
  app.decorate('access', (policy: AccessPolicy, scope?: Scope): onRequestAsyncHookHandler => {
    const hook: AccessHook = async function access(request: FastifyRequest, _reply: FastifyReply) {
      const authenticated = await app.authenticate(request);
      // A copy per request: the authenticators may share a Caller between requests (a key's memo).
      const caller = authenticated ? { ...authenticated, ip: request.ip } : null;
      request.caller = caller;
      if (caller?.apiKey) {
        if (!scope) throw forbidden('An API key cannot do this; use a bearer token from POST /api/v1/tokens');
        if (!caller.apiKey.scopes.includes(scope)) throw insufficientScope(scope);
      }
      if (caller?.role === 'admin' && adminHasTotp && !request.routeOptions.config.withoutTotp) {
        if (!(await adminHasTotp(caller.userId))) throw totpSetupRequired();
      }
      if (policy === 'optional') return;
      if (!caller) throw unauthenticated('A bearer token is required', false);
      if (policy === 'admin' && caller.role !== 'admin') throw forbidden('Only an admin may do this');
      if (policy === 'selfOrAdmin') resolveMe(request, caller);
      if (policy === 'selfOrAdmin' && caller.role !== 'admin') {
        const id = (request.params as { id?: string }).id;
        if (id !== String(caller.userId)) throw forbidden('You may act only on your own account');
      }
    };
    hook[kAccess] = { policy, ...(scope ? { scope } : {}) };
    return hook;
  });

  app.addHook('onRoute', documentAccess);
}

export default fp(authPlugin, { name: 'ferry-auth' });
