import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { errorResponses, ref } from '../../lib/common.schemas.js';
import { sendPage } from '../../lib/pagination.js';
import { ACCEPT_PATCH } from '../../plugins/content-type.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import {
  UserIdParams,
  UserListQuery,
  UserListSchema,
  UserPatchSchema,
  UserReplaceSchema,
  UserCreateSchema,
  UserSchema,
} from './users.schemas.js';
import { toUser, userEtag, type UsersService } from './users.service.js';

/** A password change hashes the new password, and checks the current one when it is given (plugins/password-hash-budget.ts). */
const passwordChangeHashes = (request: FastifyRequest): number => {
  const body = request.body as { password?: string; currentPassword?: string };
  return body.password === undefined ? 0 : body.currentPassword === undefined ? 1 : 2;
};

type UsersRoutesOptions = { users: UsersService; basePath: string; version: ApiVersion };
const tags = ['users'];

/** Sign-up, or an admin's creation of any user. */
const createRoute: FastifyPluginAsyncTypebox<UsersRoutesOptions> = async (app, opts) => {
  const { users } = opts;
  app.post(
    '/users',
    {
      onRequest: app.access('optional'),
      config: { passwordHashes: () => 1 },
      schema: {
        operationId: 'createUser',
        tags,
        summary: 'Sign up (or, with an admin token, create any user)',
        description:
          'Without an admin token REGISTRATION decides: `approval` (default) makes a pending account that an admin activates, `open` an active one, `closed` refuses with 403 REGISTRATION_CLOSED. GET /api/v1/instance tells which.',
        body: UserCreateSchema,
        response: {
          201: {
            ...ref(UserSchema),
            description: 'The new user (pending unless REGISTRATION=open or an admin set the status)',
            headers: {
              Location: {
                type: 'string',
                format: 'uri-reference',
                maxLength: 2048,
                description: 'The new user: /api/v1/users/{id}',
              },
            },
          },
          ...errorResponses(400, 401, 403, 409, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const row = await users.create(request.body, request.caller);
      return reply
        .code(201)
        .header('location', `${opts.basePath}/users/${row.id}`)
        .header('etag', userEtag(row))
        .send(toUser(row));
    },
  );
};

const readRoutes: FastifyPluginAsyncTypebox<UsersRoutesOptions> = async (app, opts) => {
  const { users } = opts;
  app.get(
    '/users',
    {
      onRequest: app.access('admin', 'users:read'),
      schema: {
        operationId: 'listUsers',
        tags,
        summary: 'List users (admin)',
        querystring: UserListQuery,
        response: {
          200: { ...ref(UserListSchema), description: 'One page of users' },
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      const page = await users.list(request.query, request.url, opts.version === 2);
      return sendPage(reply, page);
    },
  );

  app.get(
    '/users/me',
    {
      onRequest: app.access('user', 'users:read'),
      // Who is signed in stays readable to an admin who must set up two-factor first (the dashboard needs it).
      config: { withoutTotp: true },
      schema: {
        operationId: 'getCurrentUser',
        tags,
        summary: "The caller's own record",
        response: { 200: { ...ref(UserSchema), description: 'The caller' }, ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      const row = await users.get(request.caller!.userId);
      return reply.header('etag', userEtag(row)).send(toUser(row));
    },
  );

  app.get(
    '/users/:id',
    {
      onRequest: app.access('selfOrAdmin', 'users:read'),
      schema: {
        operationId: 'getUser',
        tags,
        summary: 'A user (themself or an admin)',
        params: UserIdParams,
        response: {
          200: { ...ref(UserSchema), description: 'The user (ETag: its version)' },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const row = await users.get(request.params.id);
      return reply.header('etag', userEtag(row)).send(toUser(row));
    },
  );
};

/** Replace and change: each conditional on If-Match when it is sent. */
const changeRoutes: FastifyPluginAsyncTypebox<UsersRoutesOptions> = async (app, opts) => {
  const { users } = opts;
  const writeErrors = errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 429);
  app.put(
    '/users/:id',
    {
      onRequest: app.access('selfOrAdmin'),
      config: { passwordHashes: passwordChangeHashes },
      schema: {
        operationId: 'replaceUser',
        tags,
        summary: 'Replace a user',
        params: UserIdParams,
        body: UserReplaceSchema,
        response: { 200: { ...ref(UserSchema), description: 'The user as it now is' }, ...writeErrors },
      },
    },
    async (request, reply) => {
      const row = await users.replace(request.params.id, request.body, {
        caller: request.caller!,
        ifMatch: request.headers['if-match'],
      });
      return reply.header('etag', userEtag(row)).send(toUser(row));
    },
  );

  app.patch(
    '/users/:id',
    {
      onRequest: app.access('selfOrAdmin'),
      config: { passwordHashes: passwordChangeHashes },
      schema: {
        operationId: 'updateUser',
        tags,
        summary: 'Change some fields of a user (JSON merge patch)',
        params: UserIdParams,
        body: UserPatchSchema,
        response: { 200: { ...ref(UserSchema), description: 'The user as it now is' }, ...writeErrors },
      },
    },
    async (request, reply) => {
      const row = await users.patch(request.params.id, request.body, {
        caller: request.caller!,
        ifMatch: request.headers['if-match'],
      });
      return reply.header('etag', userEtag(row)).header('accept-patch', ACCEPT_PATCH).send(toUser(row));
    },
  );
};

/** Delete, conditional on If-Match when it is sent. */
const deleteRoute: FastifyPluginAsyncTypebox<UsersRoutesOptions> = async (app, opts) => {
  const { users } = opts;
  app.delete(
    '/users/:id',
    {
      onRequest: app.access('selfOrAdmin'),
      schema: {
        operationId: 'deleteUser',
        tags,
        summary: 'Delete a user, their orders and their tokens (never the last active admin: 409 LAST_ADMIN)',
        params: UserIdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 409, 412, 429) },
      },
    },
    async (request, reply) => {
      await users.remove(request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );
};

/** SPEC §3. Handlers read validated input, call one service method and map the result to HTTP. */
export const usersRoutes: FastifyPluginAsyncTypebox<UsersRoutesOptions> = async (app, opts) => {
  // Called, not registered: the routes stay in this context, in this order (the document's order).
  await createRoute(app, opts);
  await readRoutes(app, opts);
  await changeRoutes(app, opts);
  await deleteRoute(app, opts);
};
