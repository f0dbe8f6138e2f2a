import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { errorResponses } from '../../lib/common.schemas.js';
import { sendPage } from '../../lib/pagination.js';
import {
  DeliveryListQuery,
  DeliveryParams,
  WebhookListQuery,
  WebhookParams,
  type WebhookCreate,
  type WebhookPatch,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

type WebhooksRoutesOptions = { webhooks: WebhooksService; basePath: string };

const tags = ['webhooks'];
const HOOK = Type.Ref('Webhook');
const DELIVERY = Type.Ref('WebhookDelivery');

const createRoute: FastifyPluginAsyncTypebox<WebhooksRoutesOptions> = async (app, opts) => {
  app.post(
    '/webhooks',
    {
      onRequest: app.access('user', 'webhooks:write'),
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Create a webhook: the answer carries its signing secret, shown this once',
        description: [
          'A URL that is not http(s): 400 VALIDATION_ERROR. Its host is resolved and every address checked: one that is',
          'loopback, private, link-local, CGNAT, multicast or unspecified is 422 WEBHOOK_TARGET_FORBIDDEN (unless',
          'WEBHOOK_ALLOW_PRIVATE). `domains` must be the caller\'s (400 otherwise). `scope: "instance"` is for admins (403).',
          'Version 1 of the API only: the unversioned path asked for another version answers 404.',
        ].join(' '),
        body: Type.Ref('WebhookCreate'),
        response: {
          201: {
            ...Type.Ref('WebhookCreated'),
            description: 'The new webhook and its secret',
            headers: {
              Location: {
                type: 'string',
                format: 'uri-reference',
                maxLength: 64,
                description: 'The new webhook: /api/v1/webhooks/{id}',
              },
            },
          },
          ...errorResponses(400, 401, 403, 404, 413, 415, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const hook = await opts.webhooks.create(request.body as WebhookCreate, request.caller!);
      return reply.code(201).header('location', `${opts.basePath}/webhooks/${hook.id}`).send(hook);
    },
  );
};

const readRoutes: FastifyPluginAsyncTypebox<WebhooksRoutesOptions> = async (app, opts) => {
  app.get(
    '/webhooks',
    {
      onRequest: app.access('user', 'webhooks:read'),
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: "The caller's webhooks (an admin: every webhook), oldest first by default",
        querystring: WebhookListQuery,
        response: {
          200: { ...Type.Ref('WebhookList'), description: 'One page of webhooks' },
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const page = await opts.webhooks.list(request.caller!, request.query, request.url);
      return sendPage(reply, page);
    },
  );

  app.get(
    '/webhooks/:id',
    {
      onRequest: app.access('user', 'webhooks:read'),
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'A webhook (its owner or an admin; anybody else: 404)',
        params: WebhookParams,
        response: { 200: { ...HOOK, description: 'The webhook' }, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => opts.webhooks.get(request.params.id, request.caller!),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      onRequest: app.access('user', 'webhooks:read'),
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: "A webhook's delivery attempts, newest first (pending ones too), by cursor",
        params: WebhookParams,
        querystring: DeliveryListQuery,
        response: {
          200: { ...Type.Ref('WebhookDeliveryList'), description: 'One page of attempts' },
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const page = await opts.webhooks.deliveries(request.params.id, request.query, request.caller!, request.url);
      return sendPage(reply, page);
    },
  );
};

const changeRoutes: FastifyPluginAsyncTypebox<WebhooksRoutesOptions> = async (app, opts) => {
  app.patch(
    '/webhooks/:id',
    {
      onRequest: app.access('user', 'webhooks:write'),
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary:
          'Change a webhook: url, events, domains, include_bots, description, enabled (re-enabling clears disabled_reason)',
        params: WebhookParams,
        body: Type.Ref('WebhookPatch'),
        response: {
          200: { ...HOOK, description: 'The changed webhook' },
          ...errorResponses(400, 401, 404, 413, 415, 422, 429, 503),
        },
      },
    },
    async (request) => opts.webhooks.patch(request.params.id, request.body as WebhookPatch, request.caller!),
  );

  app.delete(
    '/webhooks/:id',
    {
      onRequest: app.access('user', 'webhooks:write'),
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook and its deliveries',
        params: WebhookParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      await opts.webhooks.remove(request.params.id, request.caller!);
      return reply.code(204).send(null);
    },
  );
};

const actionRoutes: FastifyPluginAsyncTypebox<WebhooksRoutesOptions> = async (app, opts) => {
  app.post(
    '/webhooks/:id/rotate-secret',
    {
      onRequest: app.access('user', 'webhooks:write'),
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'A new signing secret, shown once; the old one also signs for 24 hours (two signatures)',
        params: WebhookParams,
        response: {
          200: { ...Type.Ref('WebhookSecret'), description: 'The new secret' },
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request) => opts.webhooks.rotateSecret(request.params.id, request.caller!),
  );

  app.post(
    '/webhooks/:id/test',
    {
      onRequest: app.access('user', 'webhooks:write'),
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send a `webhook.test` event now (whatever events the hook hears); a disabled hook: 409',
        params: WebhookParams,
        response: {
          202: { ...DELIVERY, description: 'The attempt, queued' },
          ...errorResponses(400, 401, 404, 409, 429),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await opts.webhooks.test(request.params.id, request.caller!)),
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      onRequest: app.access('user', 'webhooks:write'),
      schema: {
        operationId: 'redeliverWebhookDelivery',
        tags,
        summary: "Send an attempt's event again (the same webhook-id), as a new chain of attempts due now",
        params: DeliveryParams,
        response: {
          202: { ...DELIVERY, description: 'The new attempt, queued' },
          ...errorResponses(400, 401, 404, 409, 429),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await opts.webhooks.redeliver(request.params.id, request.params.delivery_id, request.caller!)),
  );
};

/** SPEC §22: the webhooks resource (v1). Reading needs `webhooks:read` from a key, changing `webhooks:write`. */
export const webhooksRoutes: FastifyPluginAsyncTypebox<WebhooksRoutesOptions> = async (app, opts) => {
  await createRoute(app, opts);
  await readRoutes(app, opts);
  await changeRoutes(app, opts);
  await actionRoutes(app, opts);
};
