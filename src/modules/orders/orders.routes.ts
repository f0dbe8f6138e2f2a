import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, ref } from '../../lib/common.schemas.js';
import { sendPage } from '../../lib/pagination.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import {
  OrderCreateSchema,
  OrderListQuery,
  OrderListSchema,
  OrderSchema,
  UserOrderParams,
  UserOrdersParams,
} from './orders.schemas.js';
import { toOrder, type OrdersService } from './orders.service.js';

interface OrdersRoutesOptions {
  orders: OrdersService;
  basePath: string;
  version: ApiVersion;
}

/** A user's orders: the list, and one order. */
const orderReadRoutes: FastifyPluginAsyncTypebox<OrdersRoutesOptions> = async (app, opts) => {
  const { orders } = opts;
  const tags = ['orders'];
  app.get(
    '/users/:id/orders',
    {
      onRequest: app.access('selfOrAdmin', 'orders:read'),
      schema: {
        operationId: 'listUserOrders',
        tags,
        summary: "A user's orders (themself or an admin)",
        params: UserOrdersParams,
        querystring: OrderListQuery,
        response: {
          200: { ...ref(OrderListSchema), description: "One page of the user's orders" },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const page = await orders.list(request.params.id, request.query, request.url, opts.version === 2);
      return sendPage(reply, page);
    },
  );

  app.get(
    '/users/:id/orders/:order_id',
    {
      onRequest: app.access('selfOrAdmin', 'orders:read'),
      schema: {
        operationId: 'getUserOrder',
        tags,
        summary: "One of a user's orders (themself or an admin)",
        params: UserOrderParams,
        response: {
          200: { ...ref(OrderSchema), description: 'The order' },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request) => toOrder(await orders.get(request.params.id, request.params.order_id)),
  );
};

/** SPEC §5. Handlers read validated input, call one service method and map the result to HTTP. */
export const ordersRoutes: FastifyPluginAsyncTypebox<OrdersRoutesOptions> = async (app, opts) => {
  const { orders } = opts;
  const tags = ['orders'];

  app.post(
    '/orders',
    {
      onRequest: app.access('user', 'orders:write'),
      // The Idempotency-Key header, its validation, replays, 409 and 422 come from plugins/idempotency.ts.
      config: { idempotency: 'required' },
      schema: {
        operationId: 'createOrder',
        tags,
        summary: 'Place an order for the caller (idempotent with Idempotency-Key)',
        description:
          'Only an active account may order (otherwise 422 ACCOUNT_NOT_ACTIVE). The order and the stored response for the Idempotency-Key are written in one transaction.',
        body: OrderCreateSchema,
        response: {
          201: {
            ...ref(OrderSchema),
            description: 'The order, created (or, on a replay, the stored response of the first request)',
            headers: {
              Location: {
                type: 'string',
                format: 'uri-reference',
                maxLength: 2048,
                description: 'The new order: /api/v1/users/{userId}/orders/{id}',
              },
            },
          },
          ...errorResponses(400, 401, 403, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) =>
      reply.sendIdempotent(async (tx) => {
        const row = await orders.create(request.caller!, request.body, tx);
        return {
          status: 201,
          headers: { location: `${opts.basePath}/users/${row.user_id}/orders/${row.id}` },
          body: toOrder(row),
        };
      }),
  );

  // Called, not registered: the routes stay in this context, in this order (the document's order).
  await orderReadRoutes(app, opts);
};
