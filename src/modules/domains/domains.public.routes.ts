import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { AppError } from '../../lib/app-error.js';
import { errorResponses } from '../../lib/common.schemas.js';
import type { DomainRegistry } from './domain-registry.js';
import type { DomainsService } from './domains.service.js';
import { requestHostKey } from './hostname.js';
import { APP_LINK_DOCUMENTS, type AppLinkDocument } from '../../lib/app-links.js';

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
/** Where a host's app-links documents come from: a verified domain's own, or the instance's for any other host. */
export interface AppLinkSources {
  ofDomain(id: number, name: AppLinkDocument): Promise<string | null>;
  ofDefault(name: AppLinkDocument): Promise<string | null>;
}

const APP_LINK_SUMMARIES: Record<AppLinkDocument, { operationId: string; summary: string }> = {
  apple_app_site_association: {
    operationId: 'getAppleAppSiteAssociation',
    summary:
      "iOS universal links: the host's apple_app_site_association as set on its domain (or, on any other host, by an admin on the instance); 404 when unset",
  },
  android_asset_links: {
    operationId: 'getAndroidAssetLinks',
    summary:
      "Android app links: the host's android_asset_links as set on its domain (or, on any other host, by an admin on the instance); 404 when unset",
  },
};

/**
 * SPEC §21: a host's app links at their well-known paths, as application/json. A verified domain's host answers
 * its own documents only (never the instance's: 404 when it has none); any other host is the default domain's.
 * Neither path can be a short code's (a code has no dot or slash).
 */
const appLinkRoutes: FastifyPluginAsyncTypebox<{ registry: DomainRegistry; appLinks: AppLinkSources }> = async (
  app,
  opts,
) => {
  for (const [name, path] of Object.entries(APP_LINK_DOCUMENTS) as Array<[AppLinkDocument, string]>) {
    app.get(
      path,
      {
        schema: {
          ...APP_LINK_SUMMARIES[name],
          tags: ['domains'],
          security: [],
          response: {
            200: {
              description: 'The document, exactly as it was set',
              content: {
                'application/json': {
                  schema:
                    name === 'android_asset_links'
                      ? Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 1000 })
                      : Type.Object({}, { additionalProperties: true }),
                },
              },
            },
            ...errorResponses(404),
          },
        },
      },
      async (request, reply) => {
        const domain = opts.registry.servedBy(request.host);
        const text =
          domain === undefined ? await opts.appLinks.ofDefault(name) : await opts.appLinks.ofDomain(domain.id, name);
        if (text === null) throw new AppError('NOT_FOUND', 'This host has no such document');
        return reply
          .header('cache-control', 'public, max-age=300')
          .type('application/json')
          .send(text as never); // already JSON: sent as stored
      },
    );
  }
};

export const domainsPublicRoutes: FastifyPluginAsyncTypebox<{
  domains: Pick<DomainsService, 'tokenFor'>;
  registry: DomainRegistry;
  appLinks: AppLinkSources;
}> = async (app, opts) => {
  await app.register(appLinkRoutes, { registry: opts.registry, appLinks: opts.appLinks });

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
