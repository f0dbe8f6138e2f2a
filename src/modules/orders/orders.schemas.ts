import Type, { type Static } from 'typebox';
import { Id, IdParam, Instant } from '../../lib/common.schemas.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';
import { UserIdPathParam, UserPathParams } from '../../lib/user-path.js';

const ItemId = Id('The ordered item (an integer >= 1)');
const Quantity = Type.Integer({ format: 'int32', minimum: 1, maximum: 1000, description: '1-1000' });

export const OrderSchema = Type.Object(
  {
    id: Id(),
    userId: Id('The user who placed the order'),
    itemId: ItemId,
    quantity: Quantity,
    createdAt: Instant(),
  },
  {
    $id: 'Order',
    additionalProperties: false,
    examples: [{ id: 17, userId: 1, itemId: 42, quantity: 3, createdAt: '2026-11-21T10:15:30.123Z' }],
  },
);
export type Order = Static<typeof OrderSchema>;

export const OrderCreateSchema = Type.Object(
  {
    itemId: ItemId,
    quantity: Quantity,
    userId: Type.Optional(
      Type.Integer({
        format: 'int64',
        minimum: -Number.MAX_SAFE_INTEGER,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          "Read-only: an order belongs to the caller. Echoing the caller's own id is accepted; another id is 403",
      }),
    ),
    id: Type.Optional(Type.Unknown({ description: 'Read-only; ignored' })),
    createdAt: Type.Optional(Type.Unknown({ description: 'Read-only; ignored' })),
  },
  { additionalProperties: false, examples: [{ itemId: 42, quantity: 3 }] },
);
export type OrderCreate = Static<typeof OrderCreateSchema>;

export const OrderListSchema = Type.Object(
  { data: Type.Array(Type.Ref('Order'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'OrderList', additionalProperties: false },
);

export const ORDER_SORT_COLUMNS = {
  id: 'id',
  createdAt: 'created_at',
  itemId: 'item_id',
  quantity: 'quantity',
} as const;

export const OrderListQuery = Type.Object({
  itemId: Type.Optional(Id('Only orders of this item')),
  sort: sortQuery(Object.keys(ORDER_SORT_COLUMNS)),
  ...paginationQuery,
});
export type OrderListQueryT = Static<typeof OrderListQuery>;

/** `{id}` may be `me` (lib/user-path.ts). */
export const UserOrdersParams = UserPathParams;
export const UserOrderParams = Type.Object({ id: UserIdPathParam, order_id: IdParam }, { additionalProperties: false });

/** Registered as OpenAPI components. */
export const orderSchemas = [OrderSchema, OrderListSchema];
