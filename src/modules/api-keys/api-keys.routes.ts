import { auditActorOf } from '../../db/audit-log.js';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { renameKeys, renameSchemaProperties, toCamel, toSnake } from '../../lib/case-mapping.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { sendPage, sortQuery, paginationQuery } from '../../lib/pagination.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import {
  API_KEY_SORT_COLUMNS,
  ApiKeyCreateSchema,
  ApiKeyListQuery,
  UserApiKeyParams,
  UserApiKeysParams,
  type ApiKeyCreate,
  type ApiKeyListQueryT,
} from './api-keys.schemas.js';
import type { ApiKeysService } from './api-keys.service.js';

/** What differs between v1 (snake_case, as SPEC §14 names the fields) and v2 (camelCase, cursor pages). */
interface ApiKeysRoutesOptions {
  apiKeys: ApiKeysService;
  basePath: string;
  version: ApiVersion;
}

const edges = {
  1: {
    key: Type.Ref('ApiKey'),
    created: Type.Ref('ApiKeyCreated'),
    list: Type.Ref('ApiKeyList'),
    body: ApiKeyCreateSchema,
    query: ApiKeyListQuery,
    out: <T>(body: T): T => body,
    in: (body: unknown) => body as ApiKeyCreate,
    sort: (s?: string) => s,
  },
  2: {
    key: Type.Ref('ApiKeyV2'),
    created: Type.Ref('ApiKeyCreatedV2'),
    list: Type.Ref('ApiKeyListV2'),
    body: renameSchemaProperties(ApiKeyCreateSchema, toCamel),
    query: Type.Object({ sort: sortQuery(Object.keys(API_KEY_SORT_COLUMNS).map(toCamel)), ...paginationQuery }),
    out: <T>(body: T): T => renameKeys<T>(body, toCamel),
    in: (body: unknown) => renameKeys<ApiKeyCreate>(body, toSnake),
    sort: (s?: string) => (s === undefined ? undefined : toSnake(s)),
  },
} as const;

/** Revoking a key (its user or an admin). */
const apiKeyRevocationRoute: FastifyPluginAsyncTypebox<ApiKeysRoutesOptions> = async (app, opts) => {
  const { apiKeys } = opts;
  const tags = ['api-keys'];
  app.delete(
    '/users/:id/api-keys/:key_id',
    {
      onRequest: app.access('selfOrAdmin'),
      schema: {
        operationId: 'revokeApiKey',
        tags,
        summary: 'Revoke an API key (themself or an admin, with a JWT): it is refused at once on every instance',
        params: UserApiKeyParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await apiKeys.revoke(request.params.id, request.params.key_id, auditActorOf(request.caller));
      return reply.code(204).send(null);
    },
  );
};

/** A user's keys: the list, and one key (`users:read`). */
const apiKeyReadRoutes: FastifyPluginAsyncTypebox<ApiKeysRoutesOptions> = async (app, opts) => {
  const { apiKeys } = opts;
  const edge = edges[opts.version];
  const tags = ['api-keys'];
  app.get(
    '/users/:id/api-keys',
    {
      onRequest: app.access('selfOrAdmin', 'users:read'),
      schema: {
        operationId: 'listApiKeys',
        tags,
        summary: "A user's API keys, oldest first by default (themself or an admin); never the keys themselves",
        params: UserApiKeysParams,
        querystring: edge.query,
        response: {
          200: { ...edge.list, description: 'One page of key records' },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const query = request.query as ApiKeyListQueryT;
      const page = await apiKeys.list(
        request.params.id,
        { ...query, sort: edge.sort(query.sort) as ApiKeyListQueryT['sort'] },
        request.url,
        opts.version === 2,
      );
      return edge.out(sendPage(reply, page));
    },
  );

  app.get(
    '/users/:id/api-keys/:key_id',
    {
      onRequest: app.access('selfOrAdmin', 'users:read'),
      schema: {
        operationId: 'getApiKey',
        tags,
        summary: "One of a user's API keys (themself or an admin); never the key itself",
        params: UserApiKeyParams,
        response: { 200: { ...edge.key, description: 'The key record' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => edge.out(await apiKeys.get(request.params.id, request.params.key_id)),
  );
};

/**
 * SPEC §14: a user's API keys. Creating and revoking keys take a JWT (a key never makes or revokes keys:
 * a leaked key must not be able to make itself permanent); reading them takes `users:read`.
 */
export const apiKeysRoutes: FastifyPluginAsyncTypebox<ApiKeysRoutesOptions> = async (app, opts) => {
  const { apiKeys } = opts;
  const edge = edges[opts.version];
  const tags = ['api-keys'];

  app.post(
    '/users/:id/api-keys',
    {
      onRequest: app.access('selfOrAdmin'),
      schema: {
        operationId: 'createApiKey',
        tags,
        summary: 'Create an API key for a user (themself or an admin, with a JWT); the key is shown this once',
        params: UserApiKeysParams,
        body: edge.body,
        response: {
          201: {
            ...edge.created,
            description: 'The key record and, this once, the key itself',
            headers: {
              Location: {
                type: 'string',
                format: 'uri-reference',
                maxLength: 128,
                description: 'The new key: /api/v1/users/{id}/api-keys/{key_id}',
              },
            },
          },
          ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const created = await apiKeys.create(request.params.id, edge.in(request.body), auditActorOf(request.caller));
      return reply
        .code(201)
        .header('location', `${opts.basePath}/users/${request.params.id}/api-keys/${created.id}`)
        .send(edge.out(created));
    },
  );

  // Called, not registered: the routes stay in this context, in this order (the document's order).
  await apiKeyReadRoutes(app, opts);
  await apiKeyRevocationRoute(app, opts);
};
