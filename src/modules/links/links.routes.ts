import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../lib/app-error.js';
import { negotiate, vendorJsonAsJson } from '../../lib/accept.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { securityFor } from '../../plugins/auth.js';
import { ACCEPT_PATCH } from '../../plugins/content-type.js';
import { passwordsIn } from '../../plugins/password-hash-budget.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { QR_FORMATS, QR_SIZE, type QrFormat } from './link-qr.js';
import type { LinkModeration } from './link-moderation.js';
import type { LinksBulk } from './links.bulk.js';
import { LINK_CSV_COLUMNS, type LinksExport } from './links.export.js';
import { domainQuery, LinkCodeParams, UserLinksParams, type AllLinksQueryT, type LinkCreate, type LinkListQueryT, type LinkPatch } from './links.schemas.js';
import { linkEtag, type LinksService } from './links.service.js';
import { linkEdges } from './links.v2.js';

const DomainQuery = Type.Object(domainQuery);
const QrQuery = Type.Object({
  ...domainQuery,
  size: Type.Optional(Type.Integer({ format: 'int32', minimum: QR_SIZE.min, maximum: QR_SIZE.max, default: QR_SIZE.default, description: `Width and height in pixels (${QR_SIZE.min}-${QR_SIZE.max})` })),
  format: Type.Optional(Type.Union([Type.Literal('svg'), Type.Literal('png')], { description: 'svg or png; wins over Accept' })),
});
const QR_TYPES = Object.values(QR_FORMATS);
/** Far above the largest image (a 40-L symbol at 1,024 px: about 150 kB of PNG rows, 400 kB of SVG path). */
const QR_MAX_BYTES = 1_000_000;
const JSON_TYPE = 'application/json';
const CSV_TYPE = 'text/csv';
const USER_LINKS_CSV_HEADER = LINK_CSV_COLUMNS.join(',');
/** The link's ETag, as the responses describe it. */
const ETAG = 'its version, "link-{id}-v{version}", for If-Match on PATCH';

/**
 * SPEC §6 and §13, the JSON side. The redirect itself is in redirect.routes.ts (its own context). The version's
 * edge (links.v2.ts) decides field names; the service is the same for v1 and v2.
 */
export const linksRoutes: FastifyPluginAsyncTypebox<{ links: LinksService; bulk: LinksBulk; exports: LinksExport; moderation: LinkModeration; basePath: string; version: ApiVersion }> = async (app, opts) => {
  const { links, bulk, exports, moderation } = opts;
  const edge = linkEdges[opts.version];
  const tags = ['links'];
  // The service names fields in v1's words; a v2 client sent camelCase (SPEC §2: as the client sent it).
  // Thrown on, the error reaches the app's one error handler. (Validation errors are not AppErrors here:
  // they already name what the client sent.)
  if (opts.version !== 1) {
    app.setErrorHandler((err) => {
      throw err instanceof AppError ? new AppError(err.code, err.message, edge.error(err).details, err.headers) : err;
    });
  }

  app.post('/links', {
    onRequest: app.access('optional', 'links:write'),
    // An Idempotency-Key is honoured (plugins/idempotency.ts) but not required: the link and the stored
    // response commit together. A password is a hash from the caller's budget (plugins/password-hash-budget.ts).
    config: { idempotency: 'optional', passwordHashes: (request) => (request.caller ? passwordsIn(request.body) : 0) },
    schema: {
      operationId: 'createLink', tags, summary: 'Shorten a URL (a token makes you its owner)', security: securityFor('optional'),
      description: 'Without a credential only while ANONYMOUS_LINKS is true (otherwise 401). A pending account creates nothing: 422 ACCOUNT_NOT_ACTIVE.',
      body: edge.createBody,
      response: {
        201: { ...edge.link, description: `The new link (ETag: ${ETAG})`, headers: { Location: { type: 'string', format: 'uri-reference', maxLength: 2048, description: 'The new link: /api/v1/links/{code} (with ?domain= on a domain of its own)' } } },
        ...errorResponses(400, 401, 409, 413, 415, 422, 429),
      },
    },
  }, async (request, reply) => {
    // Checked and hashed before the idempotent transaction opens (LinksService.prepare).
    const draft = await links.prepare(edge.in<LinkCreate>(request.body), request.caller);
    return reply.sendIdempotent(async (tx) => {
      const row = await links.create(draft, request.caller, tx);
      const link = links.toLink(row);
      const location = `${opts.basePath}/links/${row.short_code}${link.domain === null ? '' : `?domain=${link.domain}`}`;
      return { status: 201, headers: { location, etag: linkEtag(row) }, body: edge.out(link) };
    });
  });

  app.post('/links/bulk', {
    onRequest: app.access('optional', 'links:write'),
    config: { idempotency: 'optional', passwordHashes: (request) => (request.caller ? passwordsIn(...(request.body as { links: unknown[] }).links) : 0) },
    schema: {
      operationId: 'createLinks', tags, security: securityFor('optional'),
      summary: 'Shorten up to 100 URLs at once: one result per item, in order (an Idempotency-Key covers the batch)',
      body: edge.bulkBody,
      response: { 200: { ...edge.bulkResult, description: 'One result per item, in input order' }, ...errorResponses(400, 401, 413, 415, 422, 429) },
    },
  }, async (request, reply) => {
    const drafts = await bulk.prepareAll((request.body as { links: unknown[] }).links.map((item) => edge.parseCreate(item)), request.caller);
    return reply.sendIdempotent(async (tx) => {
      const outcomes = await bulk.createAll(drafts, request.caller, tx);
      const data = outcomes.map((o) => ('row' in o
        ? { status: 201, link: links.toLink(o.row) }
        : { status: o.status, error: edge.error(o.error) }));
      return { status: 200, headers: {}, body: edge.out({ data }) };
    });
  });

  app.get('/links', {
    onRequest: app.access('admin', 'links:read'),
    schema: {
      operationId: 'listAllLinks', tags, security: securityFor('admin', 'links:read'),
      summary: "Every link, for admins (moderation): anyone's, anonymous, disabled, and expired ones until the sweep removes them",
      description: 'Sorted and searched as a user\'s list (`domain` included; an API key limited to domains lists their links only); `user_id` and `status` narrow it further.',
      querystring: edge.allLinksQuery,
      response: { 200: { ...edge.linkList, description: 'One page of links' }, ...errorResponses(400, 401, 403, 429) },
    },
  }, async (request, reply) => {
    const query = edge.in<AllLinksQueryT>(request.query);
    const page = await moderation.listAll({ ...query, sort: edge.sort(query.sort) as AllLinksQueryT['sort'] }, request.url, opts.version === 2, request.caller?.apiKey?.domains ?? null);
    if (page.link) reply.header('link', page.link);
    return edge.out({ data: page.data, pagination: page.pagination });
  });

  app.get('/links/:code', {
    onRequest: app.access('optional', 'links:read'),
    schema: {
      operationId: 'getLink', tags, security: securityFor('optional', 'links:read'),
      summary: 'A short link: an anonymous one, anyone; an owned one, its owner (or their key with links:read) or an admin',
      description: 'A link with a password or max_visits shows its target to its owner and admins only, even when it has no owner (any more).',
      params: LinkCodeParams,
      querystring: DomainQuery,
      response: { 200: { ...edge.link, description: `The link (ETag: ${ETAG})` }, ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    const row = await links.get(request.params.code, request.caller, request.query.domain);
    return reply.header('etag', linkEtag(row)).send(edge.out(links.toLink(row)));
  });

  app.patch('/links/:code', {
    onRequest: app.access('user', 'links:write'),
    config: { passwordHashes: (request) => (request.caller ? passwordsIn(request.body) : 0) },
    schema: {
      operationId: 'updateLink', tags, security: securityFor('user'),
      summary: 'Change a link (owner or admin; JSON merge patch). The redirect follows at once here and within a second on every instance',
      description: 'original_url, expires_at, max_visits, forward_query, tags, password, title, aliases and domain may change; short_code may not. If-Match with a stale ETag: 412. ' +
        'An alias (or, moving domains, the code) taken on the domain: 409 CONFLICT. ' +
        'Admins may also set disabled (visits then answer 410 LINK_DISABLED) with an optional disabled_reason; anyone else sending another value: 403. ' +
        'A target on a blocked host: 422 DESTINATION_BLOCKED.',
      params: LinkCodeParams,
      querystring: DomainQuery,
      body: edge.patchBody,
      response: { 200: { ...edge.link, description: `The changed link (ETag: ${ETAG})` }, ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 422, 429) },
    },
  }, async (request, reply) => {
    const row = await links.patch(request.params.code, edge.in<LinkPatch>(request.body), { caller: request.caller, ifMatch: request.headers['if-match'], domain: request.query.domain });
    return reply.header('etag', linkEtag(row)).header('accept-patch', ACCEPT_PATCH).send(edge.out(links.toLink(row)));
  });

  app.delete('/links/:code', {
    onRequest: app.access('user', 'links:write'),
    schema: {
      operationId: 'deleteLink', tags, summary: 'Delete a link (owner or admin; an anonymous link: admin only). Its code is never issued again.',
      security: securityFor('user'),
      params: LinkCodeParams,
      querystring: DomainQuery,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    await links.remove(request.params.code, request.caller, request.query.domain);
    return reply.code(204).send(null);
  });

  app.get('/links/:code/qr', {
    onRequest: app.access('optional', 'links:read'),
    schema: {
      operationId: 'getLinkQrCode', tags, security: securityFor('optional', 'links:read'),
      summary: 'The short URL as a QR code (whoever may read the link): SVG by default, PNG for Accept: image/png or ?format=png',
      params: LinkCodeParams,
      querystring: QrQuery,
      response: {
        200: {
          description: 'The QR code of short_url (error correction M, 4-module quiet zone)',
          content: {
            [QR_FORMATS.svg]: { schema: Type.String({ maxLength: QR_MAX_BYTES, pattern: '^<svg ', description: 'An SVG document' }) },
            [QR_FORMATS.png]: { schema: Type.String({ format: 'binary', maxLength: QR_MAX_BYTES, description: 'A PNG image (1-bit grayscale)' }) },
          },
        },
        ...errorResponses(400, 401, 403, 404, 406, 429),
      },
    },
  }, async (request, reply) => {
    const type = request.query.format ? QR_FORMATS[request.query.format] : negotiate(request.headers.accept, QR_TYPES);
    if (type === null) throw new AppError('NOT_ACCEPTABLE', `This resource is served as ${QR_TYPES.join(' or ')}`, [{ field: 'Accept', message: `must accept ${QR_TYPES.join(' or ')}` }]);
    const format = (Object.keys(QR_FORMATS) as QrFormat[]).find((f) => QR_FORMATS[f] === type)!;
    const image = await links.qr(request.params.code, request.caller, format, request.query.size ?? QR_SIZE.default, request.query.domain);
    // (typed as the SVG's string by the type provider; a PNG is a Buffer, which Fastify sends as it is)
    return reply.header('vary', 'Accept').type(type).send(image as string);
  });

  app.get('/users/:id/links', {
    onRequest: app.access('selfOrAdmin', 'links:read'),
    schema: {
      operationId: 'listUserLinks', tags, security: securityFor('selfOrAdmin'),
      summary: "A user's links, oldest first by default (themself or an admin; `me` for the caller), with tag, text and sort; or all of them as CSV",
      description: `With Accept: text/csv the answer streams every link the filters and sort select (page, limit and cursor are the JSON list's) in the generic CSV format of the importer: a header row (${USER_LINKS_CSV_HEADER}), RFC 4180 quoting, several tags or aliases in one cell separated by |; a cell starting with = + - @, tab or CR (after any quotes) gets one quote more, which the importer takes off. The same header on both versions: it is an interchange format.`,
      params: UserLinksParams,
      querystring: edge.listQuery,
      response: {
        200: {
          description: "One page of the user's links, or all of them as CSV",
          content: {
            [JSON_TYPE]: { schema: edge.linkList },
            [CSV_TYPE]: { schema: Type.String({ pattern: `^${USER_LINKS_CSV_HEADER}\r\n`, description: `A header row (${USER_LINKS_CSV_HEADER}) and one row per link; as long as the list (streamed)` }) },
          },
        },
        ...errorResponses(400, 401, 403, 404, 406, 429),
      },
    },
  }, async (request, reply) => {
    const query = request.query as LinkListQueryT;
    const type = negotiate(vendorJsonAsJson(request.headers.accept), [JSON_TYPE, CSV_TYPE]);
    if (type === null) throw new AppError('NOT_ACCEPTABLE', "A user's links are served as application/json or text/csv", [{ field: 'Accept', message: 'must accept application/json or text/csv' }]);
    reply.header('vary', 'Accept');
    const sorted = { ...query, sort: edge.sort(query.sort) as LinkListQueryT['sort'] };
    const keyDomains = request.caller?.apiKey?.domains ?? null;
    if (type === CSV_TYPE) {
      const csv = await exports.csvForUser(request.params.id, sorted, keyDomains);
      return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="links.csv"').send(csv);
    }
    const page = await links.listForUser(request.params.id, sorted, request.url, opts.version === 2, keyDomains);
    if (page.link) reply.header('link', page.link);
    return edge.out({ data: page.data, pagination: page.pagination });
  });
};
