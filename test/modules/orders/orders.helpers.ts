import { randomUUID } from 'node:crypto';
import type { ApiResponse, TestApp } from '../../helpers/app.js';
import type { CreatedUser } from '../../helpers/factories.js';

export const ORDERS = '/api/v1/orders';

/** POST /api/v1/orders with a fresh Idempotency-Key unless one is given. */
export function postOrder(
  t: TestApp,
  user: Pick<CreatedUser, 'token'>,
  payload: unknown,
  key: string | null = randomUUID(),
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  return t.request({
    method: 'POST',
    url: ORDERS,
    token: user.token,
    payload,
    headers: { ...(key === null ? {} : { 'idempotency-key': key }), ...headers },
  });
}

export async function countOrders(t: TestApp, userId: number): Promise<number> {
  const row = await t.storage.db
    .selectFrom('orders')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countKeys(t: TestApp, userId: number): Promise<number> {
  const row = await t.storage.db
    .selectFrom('idempotency_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
