import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, ref } from '../../lib/common.schemas.js';
import type { LoginCodes } from './login-codes.js';
import { TokenParams, TokenRequestBody, TokenSchema } from './tokens.schemas.js';
import type { TokensService } from './tokens.service.js';

/** Revoking a token: the one this request carries, or one named by its jti. */
const revocationRoutes: FastifyPluginAsyncTypebox<{ tokens: TokensService; basePath: string }> = async (app, opts) => {
  const { tokens } = opts;
  const tags = ['tokens'];
  app.delete(
    '/tokens/current',
    {
      onRequest: app.access('user'),
      config: { withoutTotp: true }, // signing out stays open to an admin who must set up two-factor first
      schema: {
        operationId: 'revokeCurrentToken',
        tags,
        summary: 'Revoke the token this request carries',
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(401, 404, 429) },
      },
    },
    async (request, reply) => {
      await tokens.revoke(request.caller!.jti, request.caller!);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/tokens/:jti',
    {
      onRequest: app.access('user'),
      schema: {
        operationId: 'revokeToken',
        tags,
        summary: 'Revoke a token (its owner or an admin)',
        params: TokenParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await tokens.revoke(request.params.jti, request.caller!);
      return reply.code(204).send(null);
    },
  );
};

/** SPEC §4. */
export const tokensRoutes: FastifyPluginAsyncTypebox<{
  tokens: TokensService;
  loginCodes: LoginCodes;
  basePath: string;
}> = async (app, opts) => {
  const { tokens } = opts;
  const tags = ['tokens'];

  app.post(
    '/tokens',
    {
      // Stricter limits per client IP and per username (plugins/rate-limit.ts): password guessing.
      // ... and the password's check is a hash from the address's budget (plugins/password-hash-budget.ts).
      // A login code (SPEC §23) costs no hash; it is 256 random bits, and the per-IP limit still counts it.
      config: {
        rateLimitPreset: 'tokens',
        passwordHashes: (request) => ('login_code' in (request.body as object) ? 0 : 1),
      },
      schema: {
        operationId: 'createToken',
        tags,
        summary:
          'Exchange username and password (with a code when two-factor sign-in is on), or a login code of single sign-on, for a bearer token',
        description:
          'With two-factor sign-in on, a request without `totp_code` is 401 TOTP_REQUIRED and a wrong or used code 401 INVALID_CREDENTIALS (counted like a wrong password). PASSWORD_LOGIN=false: 403 PASSWORD_LOGIN_DISABLED. ' +
          'A login code (`login_code`, from `/app/?login_code=…` after GET /auth/oidc/login) works once and for 60 s; used, expired or unknown: 401 INVALID_CREDENTIALS.',
        security: [],
        body: TokenRequestBody,
        response: {
          201: {
            ...ref(TokenSchema),
            description: 'A new bearer token',
            headers: {
              Location: {
                type: 'string',
                format: 'uri-reference',
                maxLength: 2048,
                description: 'The token, by its jti: DELETE it to revoke it',
              },
            },
          },
          ...errorResponses(400, 401, 403, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { jti, ...token } =
        'login_code' in body
          ? await opts.loginCodes.exchange(body.login_code, request.ip)
          : await tokens.issue(body.username, body.password, { totpCode: body.totp_code, ip: request.ip });
      return reply.code(201).header('location', `${opts.basePath}/tokens/${jti}`).send(token);
    },
  );

  // Called, not registered: the routes stay in this context, in this order (the document's order).
  await revocationRoutes(app, opts);
};
