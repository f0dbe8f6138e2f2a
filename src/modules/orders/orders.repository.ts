import type { Kysely, Transaction } from 'kysely';
import type { Database, NewOrderRow, OrderRow } from '../../db/types.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface OrderFilters {
  itemId?: number;
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>;

/** Plain rows in and out; every method takes an optional transaction. */
export function createOrdersRepository(db: Kysely<Database>, paginator: Paginator) {
  return {
    async insert(row: NewOrderRow, tx: Db = db): Promise<OrderRow> {
      return tx.insertInto('orders').values(row).returningAll().executeTakeFirstOrThrow();
    },

    /** The order, only if it is that user's. */
    async findForUser(userId: number, orderId: number, tx: Db = db): Promise<OrderRow | undefined> {
      return tx
        .selectFrom('orders')
        .selectAll()
        .where('id', '=', orderId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
    },

    async listForUser(
      userId: number,
      filters: OrderFilters,
      list: ResolvedList,
      tx: Db = db,
    ): Promise<{ rows: OrderRow[]; total: number | null }> {
      let base = tx.selectFrom('orders').where('user_id', '=', userId);
      if (filters.itemId !== undefined) base = base.where('item_id', '=', filters.itemId);
      const rows = await paginator.apply(base.selectAll('orders'), list, 'orders').execute();
      const total =
        list.mode === 'page'
          ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
          : null;
      return { rows, total };
    },
  };
}
