import type { Generated, Insertable, Selectable } from 'kysely';

export interface OrdersTable {
  id: Generated<number>;
  user_id: number;
  item_id: number;
  quantity: number;
  created_at: number;
}

export type OrderRow = Selectable<OrdersTable>;
export type NewOrderRow = Insertable<OrdersTable>;
