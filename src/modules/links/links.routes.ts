import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyContextConfig } from 'fastify';
import { errorResponses, ref } from '../../lib/common.schemas.js';
import { securityFor } from '../../plugins/auth.js';
import { LinkCodeParams, LinkCreateSchema, LinkListQuery, LinkListSchema, LinkSchema, UserLinksParams } from './links.schemas.js';
import type { LinksService } from './links.service.js';

/**
 * Read by the idempotency plugin (SPEC §5 mechanics, optional here): an Idempotency-Key is honoured on link
 * creation but not required. Kept in a constant so this compiles whether or not that plugin has declared
 * the option on FastifyContextConfig yet.
 */
const IDEMPOTENCY_OPTIONAL = { idempotency: 'optional' } as FastifyContextConfig;

/** SPEC §6, the JSON side. The redirect itself is in redirect.routes.ts (its own context). */
export const linksRoutes: FastifyPluginAsyncTypebox<{ links: LinksService; basePath: string }> = async (app, opts) => {
  const { links } = opts;
  const tags = ['links'];

  app.post('/links', {
    onRequest: app.access('optional'),
    config: IDEMPOTENCY_OPTIONAL,
    schema: {
      operationId: 'createLink', tags, summary: 'Shorten a URL (a token makes you its owner)', security: securityFor('optional'),
      body: LinkCreateSchema,
      response: { 201: ref(LinkSchema), ...errorResponses(400, 401, 409, 413, 415, 429) },
    },
  }, async (request, reply) => {
    const row = await links.create(request.body, request.caller);
    return reply.code(201).header('location', `${opts.basePath}/links/${row.short_code}`).send(links.toLink(row));
  });

  app.get('/links/:code', {
    schema: {
      operationId: 'getLink', tags, summary: 'A short link (anyone)', security: [],
      params: LinkCodeParams,
      response: { 200: ref(LinkSchema), ...errorResponses(400, 404, 429) },
    },
  }, async (request) => links.toLink(await links.get(request.params.code)));

  app.delete('/links/:code', {
    onRequest: app.access('user'),
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
    onRequest: app.access('selfOrAdmin'),
    schema: {
      operationId: 'listUserLinks', tags, summary: "A user's links, newest last by default (themself or an admin)", security: securityFor('selfOrAdmin'),
      params: UserLinksParams,
      querystring: LinkListQuery,
      response: { 200: ref(LinkListSchema), ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    const page = await links.listForUser(request.params.id, request.query, request.url);
    if (page.link) reply.header('link', page.link);
    return { data: page.data, pagination: page.pagination };
  });
};
