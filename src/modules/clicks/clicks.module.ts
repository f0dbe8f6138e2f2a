import type { FastifyPluginAsync } from 'fastify';
import type { Storage } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import type { LinkAccess } from './link-access.js';
import { createClickRecordsRepository } from './click-records.repository.js';
import { clickRecordsRoutes } from './click-records.routes.js';
import { clickRecordSchemas } from './click-records.schemas.js';
import { createClickRecordsService } from './click-records.service.js';
import { clicksRoutes } from './clicks.routes.js';
import { clickSchemas } from './clicks.schemas.js';
import { createClicksService } from './clicks.service.js';
import { createStatsRepository } from './stats.repository.js';
import type { UsersRepository } from '../users/index.js';

export const clicksModuleSchemas = [...clickSchemas, ...clickRecordSchemas];

export interface ClicksModuleDeps {
  storage: Pick<Storage, 'db' | 'sqlite'>;
  /** the link a caller may read (owner or admin) */
  links: LinkAccess;
  /** whose statistics GET /users/{id}/stats may answer */
  users: Pick<UsersRepository, 'findById'>;
  paginator: Paginator;
  clock: Clock;
}

/** The statistics and the click records of a link, as JSON routes inside an /api/v{n} context. */
export function createClicksModule(deps: ClicksModuleDeps) {
  const { links, paginator, clock } = deps;
  const stats = createClicksService({ stats: createStatsRepository(deps.storage), links, users: deps.users, clock });
  const records = createClickRecordsService({ records: createClickRecordsRepository(deps.storage.db, paginator), links, paginator });
  return {
    stats,
    apiRoutes: (async (api, opts) => {
      await api.register(clicksRoutes, { clicks: stats, version: opts.version });
      await api.register(clickRecordsRoutes, { records, version: opts.version });
    }) as FastifyPluginAsync<{ version: ApiVersion }>,
  };
}
