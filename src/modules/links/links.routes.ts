import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../lib/app-error.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { sendPage } from '../../lib/pagination.js';
import { securityFor } from '../../plugins/auth.js';
import { ACCEPT_PATCH } from '../../plugins/content-type.js';
import { passwordsIn } from '../../plugins/password-hash-budget.js';
import { registerLinkQrRoute } from './link-qr.routes.js';
import { registerLinkRulesRoutes } from './link-rules.routes.js';
import { domainQuery, LinkCodeParams, type AllLinksQueryT, type LinkCreate, type LinkPatch } from './links.schemas.js';
import type { LinkRoutesContext, LinksApp, LinksRoutesOptions } from './links.routes-context.js';
import { linkEtag } from './links.service.js';
import { linkEdges } from './links.v2.js';
import { registerUserLinksRoute } from './user-links.routes.js';

const DomainQuery = Type.Object(domainQuery);
/** The link's ETag, as the responses describe it. */
const ETAG = 'its version, "link-{id}-v{version}", for If-Match on PATCH';

/**
 * SPEC §6 and §13, the JSON side. The redirect itself is in redirect.routes.ts (its own context). The version's
 * edge (links.v2.ts) decides field names; the service is the same for v1 and v2.
 */
export const linksRoutes: FastifyPluginAsyncTypebox<LinksRoutesOptions> = async (app, opts) => {
  const edge = linkEdges[opts.version];
  const context: LinkRoutesContext = { edge, tags: ['links'], opts };
  // The service names fields in v1's words; a v2 client sent camelCase (SPEC §2: as the client sent it).
  // Thrown on, the error reaches the app's one error handler. (Validation errors are not AppErrors here:
  // they already name what the client sent.)
  if (opts.version !== 1) {
    app.setErrorHandler((err) => {
      throw err instanceof AppError ? new AppError(err.code, err.message, edge.error(err).details, err.headers) : err;
    });
  }

  // Registered in this order, which is the order of the OpenAPI document's paths.
  registerLinkCreation(app, context);
  registerBulkCreation(app, context);
  registerAllLinksList(app, context);
  registerLinkByCode(app, context);
  registerLinkChanges(app, context);
  registerLinkQrRoute(app, context);
  registerLinkRulesRoutes(app, context);
  registerUserLinksRoute(app, context);
};

/** POST /links. */
function registerLinkCreation(app: LinksApp, { edge, tags, opts: { links, basePath } }: LinkRoutesContext): void {
  app.post(
    '/links',
    {
      onRequest: app.access('optional', 'links:write'),
      // An Idempotency-Key is honoured (plugins/idempotency.ts) but not required: the link and the stored
      // response commit together. A password is a hash from the caller's budget (plugins/password-hash-budget.ts).
      config: {
        idempotency: 'optional',
        passwordHashes: (request) => (request.caller ? passwordsIn(request.body) : 0),
      },
      schema: {
        operationId: 'createLink',
        tags,
        summary: 'Shorten a URL (a token makes you its owner)',
        security: securityFor('optional'),
        description:
          'Without a credential only while ANONYMOUS_LINKS is true (otherwise 401). A pending account creates nothing: 422 ACCOUNT_NOT_ACTIVE.',
        body: edge.createBody,
        response: {
          201: {
            ...edge.link,
            description: `The new link (ETag: ${ETAG})`,
            headers: {
              Location: {
                type: 'string',
                format: 'uri-reference',
                maxLength: 2048,
                description: 'The new link: /api/v1/links/{code} (with ?domain= on a domain of its own)',
              },
            },
          },
          ...errorResponses(400, 401, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      // Checked and hashed before the idempotent transaction opens (LinksService.prepare).
      const draft = await links.prepare(edge.in<LinkCreate>(request.body), request.caller);
      return reply.sendIdempotent(async (tx) => {
        const row = await links.create(draft, request.caller, tx);
        const link = links.toLink(row);
        const location = `${basePath}/links/${row.short_code}${link.domain === null ? '' : `?domain=${link.domain}`}`;
        return { status: 201, headers: { location, etag: linkEtag(row) }, body: edge.out(link) };
      });
    },
  );
}

/** POST /links/bulk. */
function registerBulkCreation(app: LinksApp, { edge, tags, opts: { links, bulk } }: LinkRoutesContext): void {
  app.post(
    '/links/bulk',
    {
      onRequest: app.access('optional', 'links:write'),
      config: {
        idempotency: 'optional',
        passwordHashes: (request) =>
          request.caller ? passwordsIn(...(request.body as { links: unknown[] }).links) : 0,
      },
      schema: {
        operationId: 'createLinks',
        tags,
        security: securityFor('optional'),
        summary: 'Shorten up to 100 URLs at once: one result per item, in order (an Idempotency-Key covers the batch)',
        body: edge.bulkBody,
        response: {
          200: { ...edge.bulkResult, description: 'One result per item, in input order' },
          ...errorResponses(400, 401, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const drafts = await bulk.prepareAll(
        (request.body as { links: unknown[] }).links.map((item) => edge.parseCreate(item)),
        request.caller,
      );
      return reply.sendIdempotent(async (tx) => {
        const outcomes = await bulk.createAll(drafts, request.caller, tx);
        const data = outcomes.map((o) =>
          'row' in o ? { status: 201, link: links.toLink(o.row) } : { status: o.status, error: edge.error(o.error) },
        );
        return { status: 200, headers: {}, body: edge.out({ data }) };
      });
    },
  );
}

/** GET /links: every link, for admins. */
function registerAllLinksList(app: LinksApp, { edge, tags, opts: { moderation, version } }: LinkRoutesContext): void {
  app.get(
    '/links',
    {
      onRequest: app.access('admin', 'links:read'),
      schema: {
        operationId: 'listAllLinks',
        tags,
        security: securityFor('admin', 'links:read'),
        summary:
          "Every link, for admins (moderation): anyone's, anonymous, disabled, and expired ones until the sweep removes them",
        description:
          "Sorted and searched as a user's list (`domain` included; an API key limited to domains lists their links only); `user_id` and `status` narrow it further.",
        querystring: edge.allLinksQuery,
        response: {
          200: { ...edge.linkList, description: 'One page of links' },
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      const query = edge.in<AllLinksQueryT>(request.query);
      const page = await moderation.listAll(
        { ...query, sort: edge.sort(query.sort) as AllLinksQueryT['sort'] },
        request.url,
        version === 2,
        request.caller?.apiKey?.domains ?? null,
      );
      return edge.out(sendPage(reply, page));
    },
  );
}

/** GET /links/{code}. */
function registerLinkByCode(app: LinksApp, { edge, tags, opts: { links } }: LinkRoutesContext): void {
  app.get(
    '/links/:code',
    {
      onRequest: app.access('optional', 'links:read'),
      schema: {
        operationId: 'getLink',
        tags,
        security: securityFor('optional', 'links:read'),
        summary:
          'A short link: an anonymous one, anyone; an owned one, its owner (or their key with links:read) or an admin',
        description:
          'A link with a password or max_visits shows its target to its owner and admins only, even when it has no owner (any more).',
        params: LinkCodeParams,
        querystring: DomainQuery,
        response: {
          200: { ...edge.link, description: `The link (ETag: ${ETAG})` },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const row = await links.get(request.params.code, request.caller, request.query.domain);
      return reply.header('etag', linkEtag(row)).send(edge.out(links.toLink(row)));
    },
  );
}

/** PATCH and DELETE /links/{code}. */
function registerLinkChanges(app: LinksApp, { edge, tags, opts: { links } }: LinkRoutesContext): void {
  app.patch(
    '/links/:code',
    {
      onRequest: app.access('user', 'links:write'),
      config: { passwordHashes: (request) => (request.caller ? passwordsIn(request.body) : 0) },
      schema: {
        operationId: 'updateLink',
        tags,
        security: securityFor('user'),
        summary:
          'Change a link (owner or admin; JSON merge patch). The redirect follows at once here and within a second on every instance',
        description:
          'original_url, expires_at, max_visits, forward_query, tags, password, title, aliases, preview and domain may change; short_code may not. If-Match with a stale ETag: 412. ' +
          'An alias (or, moving domains, the code) taken on the domain: 409 CONFLICT. ' +
          'Admins may also set disabled (visits then answer 410 LINK_DISABLED) with an optional disabled_reason; anyone else sending another value: 403. ' +
          'A target on a blocked host: 422 DESTINATION_BLOCKED.',
        params: LinkCodeParams,
        querystring: DomainQuery,
        body: edge.patchBody,
        response: {
          200: { ...edge.link, description: `The changed link (ETag: ${ETAG})` },
          ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const row = await links.patch(request.params.code, edge.in<LinkPatch>(request.body), {
        caller: request.caller,
        ifMatch: request.headers['if-match'],
        domain: request.query.domain,
      });
      return reply
        .header('etag', linkEtag(row))
        .header('accept-patch', ACCEPT_PATCH)
        .send(edge.out(links.toLink(row)));
    },
  );

  app.delete(
    '/links/:code',
    {
      onRequest: app.access('user', 'links:write'),
      schema: {
        operationId: 'deleteLink',
        tags,
        summary: 'Delete a link (owner or admin; an anonymous link: admin only). Its code is never issued again.',
        security: securityFor('user'),
        params: LinkCodeParams,
        querystring: DomainQuery,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await links.remove(request.params.code, request.caller, request.query.domain);
      return reply.code(204).send(null);
    },
  );
}
