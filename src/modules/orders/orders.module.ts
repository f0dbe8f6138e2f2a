import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import type { UsersRepository } from '../users/index.js';
import { createOrdersRepository } from './orders.repository.js';
import { ordersRoutes } from './orders.routes.js';
import { orderSchemas } from './orders.schemas.js';
import { createOrdersService } from './orders.service.js';

/** Orders: the service and its routes. */
export function createOrdersModule(deps: {
  db: Kysely<Database>;
  users: Pick<UsersRepository, 'findById'>;
  clock: Clock;
  paginator: Paginator;
}) {
  const orders = createOrdersService({
    orders: createOrdersRepository(deps.db, deps.paginator),
    users: deps.users,
    clock: deps.clock,
    paginator: deps.paginator,
  });
  return appModule({
    orders,
    schemas: orderSchemas,
    apiRoutes: async (api, { basePath, version }) => {
      await api.register(ordersRoutes, { orders, basePath, version });
    },
  });
}
