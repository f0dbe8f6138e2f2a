import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, forbidden } from '../lib/app-error.js';
import type { Caller } from '../lib/caller.js';
import { resolveMe } from '../lib/user-path.js';
import { InvalidTokenError, type TokensService } from '../modules/tokens/tokens.service.js';

/**
 * Authentication says who, authorization says what (SPEC §4). A route declares its policy once:
 * `onRequest: app.access('selfOrAdmin')`. It runs before the body is read, so a caller without the right
 * token learns nothing about validation rules or data.
 *
 * - `optional`: anonymous is fine; a token that is sent must be valid.
 * - `user`: any valid token.
 * - `admin`: an admin's token.
 * - `selfOrAdmin`: the user named by the `:id` path parameter, or an admin. Another user gets 403 whether or
 *   not that id exists (no existence oracle). `:id` may be `me`, the caller (lib/user-path.ts).
 */
export type AccessPolicy = 'optional' | 'user' | 'admin' | 'selfOrAdmin';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyInstance {
    access(policy: AccessPolicy): onRequestAsyncHookHandler;
  }
}

const REALM = 'Bearer realm="ferry"';

const unauthenticated = (message: string, tokenSent: boolean): AppError =>
  new AppError('UNAUTHENTICATED', message, [], {
    'WWW-Authenticate': tokenSent ? `${REALM}, error="invalid_token", error_description="${message}"` : REALM,
  });

/** The OpenAPI `security` of a policy. */
export function securityFor(policy: AccessPolicy): Array<Record<string, string[]>> {
  return policy === 'optional' ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }];
}

async function authPlugin(app: FastifyInstance, opts: { tokens: Pick<TokensService, 'authenticate'> }): Promise<void> {
  app.decorateRequest('caller', null);

  async function identify(request: FastifyRequest): Promise<Caller | null> {
    const header = request.headers.authorization;
    if (header === undefined) return null;
    // RFC 6750 §3.1: credentials of another scheme (Basic, …) carry no bearer token, so the challenge has no
    // error code; error="invalid_token" is for a bearer token that was sent and refused.
    if (!/^Bearer(\s|$)/i.test(header)) throw unauthenticated('A bearer token is required', false);
    const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
    if (!match) throw unauthenticated('The Authorization header must be "Bearer <token>"', true);
    try {
      return await opts.tokens.authenticate(match[1]!);
    } catch (err) {
      if (err instanceof InvalidTokenError) throw unauthenticated(err.message, true);
      throw err;
    }
  }

  app.decorate('access', (policy: AccessPolicy): onRequestAsyncHookHandler => {
    return async function access(request: FastifyRequest, _reply: FastifyReply) {
      const caller = await identify(request);
      request.caller = caller;
      if (policy === 'optional') return;
      if (!caller) throw unauthenticated('A bearer token is required', false);
      if (policy === 'admin' && caller.role !== 'admin') throw forbidden('Only an admin may do this');
      if (policy === 'selfOrAdmin') resolveMe(request, caller);
      if (policy === 'selfOrAdmin' && caller.role !== 'admin') {
        const id = (request.params as { id?: string }).id;
        if (id !== String(caller.userId)) throw forbidden('You may act only on your own account');
      }
    };
  });
}

export default fp(authPlugin, { name: 'ferry-auth' });
