import type { Transaction } from 'kysely';
import type { Database, OrderRow } from '../../db/types.js';
import { AppError, notFound } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { isoTime } from '../../lib/common.schemas.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import type { UsersRepository } from '../users/index.js';
import { ORDER_SORT_COLUMNS, type Order, type OrderCreate, type OrderListQueryT } from './orders.schemas.js';
import type { OrdersRepository } from './orders.repository.js';

export function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    userId: row.user_id,
    itemId: row.item_id,
    quantity: row.quantity,
    createdAt: isoTime(row.created_at),
  };
}

export type OrdersService = ReturnType<typeof createOrdersService>;

/** SPEC §5. The service knows nothing of Idempotency-Key: creation runs in whatever transaction it is given. */
export function createOrdersService(deps: {
  orders: OrdersRepository;
  users: Pick<UsersRepository, 'findById'>;
  clock: Clock;
  paginator: Paginator;
}) {
  const { orders, users, clock, paginator } = deps;

  return {
    /** Places an order for the caller. Only an active account may order; the status is read inside `tx`. */
    async create(caller: Caller, input: OrderCreate, tx?: Transaction<Database>): Promise<OrderRow> {
      if (input.userId !== undefined && input.userId !== caller.userId) {
        throw new AppError('FORBIDDEN', 'An order always belongs to the caller', [
          { field: 'userId', message: "must be the caller's own id, or omitted" },
        ]);
      }
      const user = await users.findById(caller.userId, tx);
      if (!user)
        throw new AppError('UNAUTHENTICATED', 'The token belongs to no user', [], {
          'WWW-Authenticate': 'Bearer realm="ferry", error="invalid_token"',
        });
      if (user.status !== 'active') {
        throw new AppError('ACCOUNT_NOT_ACTIVE', `Only an active account may order; this one is ${user.status}`);
      }
      return orders.insert(
        { user_id: caller.userId, item_id: input.itemId, quantity: input.quantity, created_at: clock.now() },
        tx,
      );
    },

    /** One order of one user: 404 unless it exists and is that user's. */
    async get(userId: number, orderId: number): Promise<OrderRow> {
      const row = await orders.findForUser(userId, orderId);
      if (!row) throw notFound('Order');
      return row;
    },

    async list(
      userId: number,
      query: OrderListQueryT,
      requestUrl: string,
      cursorOnly = false,
    ): Promise<PageResult<Order>> {
      const filters = { itemId: query.itemId };
      const list = paginator.resolve(query, ORDER_SORT_COLUMNS, filters, cursorOnly);
      if (!(await users.findById(userId))) throw notFound('User');
      const { rows, total } = await orders.listForUser(userId, filters, list);
      const sortValue = (r: OrderRow): number => r[list.sortColumn as keyof OrderRow];
      return paginator.page(rows, list, total, requestUrl, toOrder, sortValue);
    },
  };
}
