import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { AppError } from '../../lib/app-error.js';
import { errorResponses } from '../../lib/common.schemas.js';
import type { DomainRegistry } from './domain-registry.js';
import type { DomainsService } from './domains.service.js';
import { requestHostKey } from './hostname.js';

/** SPEC §25: a bare host name (a trailing dot allowed); a port, a path or any other character is 400. */
const BareHostname = Type.String({
  minLength: 1,
  maxLength: 254,
  pattern: '^[A-Za-z0-9.-]+$',
  description:
    'The host name Caddy asks about: letters, digits, dots and hyphens only (no port, path, or other character)',
});
const TOKEN = Type.String({
  pattern: '^[0-9a-zA-Z]{1,64}$',
  maxLength: 64,
  description: "The domain's verification token",
});

/**
 * The two answers a domain needs outside the API (SPEC §19, §25), at the root: a verified domain's token on its
 * own host (so that its daily re-check passes once the name points here; an unverified claim's token is never
 * answered, so pointing a name here proves nothing by itself), and the question Caddy's on-demand TLS asks
 * before it gets a certificate for a host.
 */
export const domainsPublicRoutes: FastifyPluginAsyncTypebox<{
  domains: Pick<DomainsService, 'tokenFor'>;
  registry: DomainRegistry;
}> = async (app, opts) => {
  app.get(
    '/.well-known/ferry-verification/:token',
    {
      schema: {
        operationId: 'getDomainVerificationToken',
        tags: ['domains'],
        security: [],
        summary:
          "A verified domain's token, answered on its own host for its daily re-check (an unverified claim's token: 404)",
        params: Type.Object({ token: TOKEN }, { additionalProperties: false }),
        response: {
          200: {
            description: 'The token',
            content: { 'text/plain': { schema: Type.String({ maxLength: 64, pattern: '^[0-9a-zA-Z]+$' }) } },
          },
          ...errorResponses(400, 404),
        },
      },
    },
    async (request, reply) => {
      const token = await opts.domains.tokenFor(requestHostKey(request.host), request.params.token);
      if (token === null) throw new AppError('NOT_FOUND', 'No verified domain of this host has this token');
      return reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(token);
    },
  );

  app.get(
    '/internal/tls/allowed',
    {
      schema: {
        operationId: 'isTlsAllowed',
        tags: ['domains'],
        security: [],
        summary:
          "Whether a certificate may be issued for a host: 200 for a verified domain, 404 otherwise (Caddy's on-demand TLS `ask`)",
        querystring: Type.Object({ domain: BareHostname }),
        response: {
          200: Type.Object(
            { domain: Type.String({ maxLength: 253, pattern: '^[a-z0-9.-]+$' }), allowed: Type.Literal(true) },
            { additionalProperties: false, description: 'A verified domain' },
          ),
          ...errorResponses(400, 404),
        },
      },
    },
    async (request, reply) => {
      const entry = opts.registry.servedBy(request.query.domain);
      if (!entry) throw new AppError('NOT_FOUND', 'This host is not a verified domain');
      return reply.header('cache-control', 'no-store').send({ domain: entry.hostname, allowed: true as const });
    },
  );
};
