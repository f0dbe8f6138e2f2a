import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../lib/common.schemas.js';
import { securityFor } from '../../plugins/auth.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { LinkCodeParams, UserLinksParams, type LinkCreate, type LinkListQueryT } from './links.schemas.js';
import type { LinksService } from './links.service.js';
import { linkEdges } from './links.v2.js';

/**
 * SPEC §6, the JSON side. The redirect itself is in redirect.routes.ts (its own context). The version's edge
 * (links.v2.ts) decides field names; the service is the same for v1 and v2.
 */
export const linksRoutes: FastifyPluginAsyncTypebox<{ links: LinksService; basePath: string; version: ApiVersion }> = async (app, opts) => {
  const { links } = opts;
  const edge = linkEdges[opts.version];
  const tags = ['links'];

  app.post('/links', {
    onRequest: app.access('optional', 'links:write'),
    // An Idempotency-Key is honoured (plugins/idempotency.ts) but not required: the link and the stored
    // response commit together.
    config: { idempotency: 'optional' },
    schema: {
      operationId: 'createLink', tags, summary: 'Shorten a URL (a token makes you its owner)', security: securityFor('optional'),
      body: edge.createBody,
      response: { 201: { ...edge.link, description: 'The new link', headers: { Location: { type: 'string', format: 'uri-reference', maxLength: 2048, description: 'The new link: /api/v1/links/{code}' } } }, ...errorResponses(400, 401, 409, 413, 415, 429) },
    },
  }, async (request, reply) =>
    reply.sendIdempotent(async (tx) => {
      const row = await links.create(edge.in<LinkCreate>(request.body), request.caller, tx);
      return { status: 201, headers: { location: `${opts.basePath}/links/${row.short_code}` }, body: edge.out(links.toLink(row)) };
    }));

  app.get('/links/:code', {
    schema: {
      operationId: 'getLink', tags, summary: 'A short link (anyone)', security: [],
      params: LinkCodeParams,
      response: { 200: { ...edge.link, description: 'The link' }, ...errorResponses(400, 404, 429) },
    },
  }, async (request) => edge.out(links.toLink(await links.get(request.params.code))));

  app.delete('/links/:code', {
    onRequest: app.access('user', 'links:write'),
    schema: {
      operationId: 'deleteLink', tags, summary: 'Delete a link (owner or admin; an anonymous link: admin only). Its code is never issued again.',
      security: securityFor('user'),
      params: LinkCodeParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    await links.remove(request.params.code, request.caller);
    return reply.code(204).send(null);
  });

  app.get('/users/:id/links', {
    onRequest: app.access('selfOrAdmin', 'links:read'),
    schema: {
      operationId: 'listUserLinks', tags, summary: "A user's links, newest last by default (themself or an admin)", security: securityFor('selfOrAdmin'),
      params: UserLinksParams,
      querystring: edge.listQuery,
      response: { 200: { ...edge.linkList, description: "One page of the user's links" }, ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    const query = request.query as LinkListQueryT;
    const page = await links.listForUser(request.params.id, { ...query, sort: edge.sort(query.sort) as LinkListQueryT['sort'] }, request.url, opts.version === 2);
    if (page.link) reply.header('link', page.link);
    return edge.out({ data: page.data, pagination: page.pagination });
  });
};
