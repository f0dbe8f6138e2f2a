import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { renameKeys, renameSchemaProperties, toCamel, toSnake } from '../../lib/case-mapping.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { sendPage } from '../../lib/pagination.js';
import { ACCEPT_PATCH } from '../../plugins/content-type.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import {
  DomainDeleteQuery,
  DomainListQuery,
  DomainListV2Query,
  DomainParams,
  DomainPatchSchema,
  type DomainCreate,
  type DomainListQueryT,
  type DomainPatch,
} from './domains.schemas.js';
import { domainEtag } from './domain-record.js';
import type { DomainsService } from './domains.service.js';

/** What differs between v1 (snake_case) and v2 (camelCase, cursor pages). */
const edges = {
  1: {
    domain: Type.Ref('Domain'),
    list: Type.Ref('DomainList'),
    createBody: Type.Ref('DomainCreate'),
    patchBody: DomainPatchSchema,
    query: DomainListQuery,
    out: <T>(body: T): T => body,
    in: <T>(body: unknown) => body as T,
    sort: (s?: string) => s,
  },
  2: {
    domain: Type.Ref('DomainV2'),
    list: Type.Ref('DomainListV2'),
    createBody: Type.Ref('DomainCreateV2'),
    patchBody: renameSchemaProperties(DomainPatchSchema, toCamel),
    query: DomainListV2Query,
    out: <T>(body: T): T => renameKeys<T>(body, toCamel),
    in: <T>(body: unknown) => renameKeys<T>(body, toSnake),
    sort: (s?: string) => (s === undefined ? undefined : toSnake(s)),
  },
} as const;

const ETAG = 'its version, "domain-{id}-v{version}", for If-Match on PATCH';

const tags = ['domains'];

type DomainsRoutesOptions = { domains: DomainsService; basePath: string; version: ApiVersion };

const createRoute: FastifyPluginAsyncTypebox<DomainsRoutesOptions> = async (app, opts) => {
  const { domains } = opts;
  const edge = edges[opts.version];
  app.post(
    '/domains',
    {
      onRequest: app.access('user', 'links:write'),
      schema: {
        operationId: 'createDomain',
        tags,
        summary: 'Claim a domain (active users; an admin may name another owner): the answer says how to verify it',
        description:
          'Several users may claim a host name until one of them verifies it. A verified name, or a second claim of yours: 409.',
        body: edge.createBody,
        response: {
          201: {
            ...edge.domain,
            description: `The new domain, not verified yet (ETag: ${ETAG})`,
            headers: {
              Location: {
                type: 'string',
                format: 'uri-reference',
                maxLength: 64,
                description: 'The new domain: /api/v1/domains/{id}',
              },
            },
          },
          ...errorResponses(400, 401, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const row = await domains.create(edge.in<DomainCreate>(request.body), request.caller!);
      return reply
        .code(201)
        .header('location', `${opts.basePath}/domains/${row.id}`)
        .header('etag', domainEtag(row))
        .send(edge.out(domains.toDomain(row)));
    },
  );
};

const readRoutes: FastifyPluginAsyncTypebox<DomainsRoutesOptions> = async (app, opts) => {
  const { domains } = opts;
  const edge = edges[opts.version];
  app.get(
    '/domains',
    {
      onRequest: app.access('user', 'links:read'),
      schema: {
        operationId: 'listDomains',
        tags,
        summary: "The caller's domains (an admin: every domain, or one user's with owner_id), oldest first by default",
        querystring: edge.query,
        response: { 200: { ...edge.list, description: 'One page of domains' }, ...errorResponses(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const query = request.query as DomainListQueryT;
      const page = await domains.list(
        request.caller!,
        { ...query, sort: edge.sort(query.sort) as DomainListQueryT['sort'] },
        request.url,
        opts.version === 2,
      );
      return edge.out(sendPage(reply, page));
    },
  );

  app.get(
    '/domains/:id',
    {
      onRequest: app.access('user', 'links:read'),
      schema: {
        operationId: 'getDomain',
        tags,
        summary: 'A domain, with its verification record and re-check state (owner or admin)',
        params: DomainParams,
        response: {
          200: { ...edge.domain, description: `The domain (ETag: ${ETAG})` },
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const row = await domains.get(request.params.id, request.caller!);
      return reply.header('etag', domainEtag(row)).send(edge.out(domains.toDomain(row)));
    },
  );
};

const changeRoutes: FastifyPluginAsyncTypebox<DomainsRoutesOptions> = async (app, opts) => {
  const { domains } = opts;
  const edge = edges[opts.version];
  app.patch(
    '/domains/:id',
    {
      onRequest: app.access('user', 'links:write'),
      schema: {
        operationId: 'updateDomain',
        tags,
        summary:
          'Change a domain: its fallbacks, scheme and app links (owner or admin; JSON merge patch); an admin may change its owner',
        params: DomainParams,
        body: edge.patchBody,
        description:
          'A fallback to a host on the blocked hosts list: 422 DESTINATION_BLOCKED naming the field (also on creation).',
        response: {
          200: { ...edge.domain, description: `The changed domain (ETag: ${ETAG})` },
          ...errorResponses(400, 401, 404, 409, 412, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const row = await domains.patch(
        request.params.id,
        edge.in<DomainPatch>(request.body),
        request.caller!,
        request.headers['if-match'],
      );
      return reply
        .header('etag', domainEtag(row))
        .header('accept-patch', ACCEPT_PATCH)
        .send(edge.out(domains.toDomain(row)));
    },
  );

  app.delete(
    '/domains/:id',
    {
      onRequest: app.access('user', 'links:write'),
      schema: {
        operationId: 'deleteDomain',
        tags,
        summary:
          'Delete a domain (owner or admin); one with links: 409, unless an admin sends force=true (its links go too)',
        params: DomainParams,
        querystring: DomainDeleteQuery,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await domains.remove(request.params.id, request.caller!, request.query.force === true);
      return reply.code(204).send(null);
    },
  );
};

const verifyRoute: FastifyPluginAsyncTypebox<DomainsRoutesOptions> = async (app, opts) => {
  const { domains } = opts;
  const edge = edges[opts.version];
  app.post(
    '/domains/:id/verify',
    {
      onRequest: app.access('user', 'links:write'),
      schema: {
        operationId: 'verifyDomain',
        tags,
        summary:
          "Prove control of a domain: its DNS TXT record, or the HTTP path answered by the host's current server",
        description: [
          'The TXT record _ferry.<hostname> with the value of verification.txt_value is looked up first; then',
          'http://<hostname><verification.http_path> (port 80, no redirects followed, private addresses refused unless',
          'DOMAIN_VERIFY_ALLOW_PRIVATE, 10 s at most). 422 DOMAIN_NOT_VERIFIED says what was found (details `dns` and `http`).',
          'The first claim of a name to prove it owns it: the other claims are removed with their links; 409 CONFLICT when',
          'another claim was verified first.',
        ].join(' '),
        params: DomainParams,
        response: {
          200: { ...edge.domain, description: 'The domain, verified' },
          ...errorResponses(400, 401, 404, 409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const row = await domains.verify(request.params.id, request.caller!);
      return reply.header('etag', domainEtag(row)).send(edge.out(domains.toDomain(row)));
    },
  );
};

/** SPEC §19: the domains resource. Reading needs `links:read` from a key, changing `links:write`. */
export const domainsRoutes: FastifyPluginAsyncTypebox<DomainsRoutesOptions> = async (app, opts) => {
  // Called, not registered: the routes stay in this context, in this order (the document's order).
  await createRoute(app, opts);
  await readRoutes(app, opts);
  await changeRoutes(app, opts);
  await verifyRoute(app, opts);
};
