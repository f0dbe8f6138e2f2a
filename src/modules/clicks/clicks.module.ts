import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import { CLICK_PARTITIONS_EVERY_MS, maintainClickPartitions } from '../../db/click-partitions.js';
import type { Storage } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { CLICK_RETENTION_EVERY_MS, deleteExpiredClicks } from './click-retention.js';
import type { LinkAccess } from './link-access.js';
import { createClickRecordsRepository } from './records/click-records.repository.js';
import { clickRecordsRoutes } from './records/click-records.routes.js';
import { clickRecordSchemas } from './records/click-records.schemas.js';
import { createClickRecordsService } from './records/click-records.service.js';
import { statsRoutes } from './stats/stats.routes.js';
import { statsSchemas } from './stats/stats.schemas.js';
import { createStatsService } from './stats/stats.service.js';
import { createStatsRepository } from './stats/stats.repository.js';
import type { UsersRepository } from '../users/index.js';

export const clicksModuleSchemas = [...statsSchemas, ...clickRecordSchemas];

export interface ClicksModuleDeps {
  storage: Pick<Storage, 'db' | 'sqlite' | 'dialect'>;
  /** the link a caller may read (owner or admin) */
  links: LinkAccess;
  /** whose statistics GET /users/{id}/stats may answer */
  users: Pick<UsersRepository, 'findById'>;
  paginator: Paginator;
  clock: Clock;
  /** CLICK_RETENTION_MONTHS: on PostgreSQL, monthly partitions older than this are dropped */
  retentionMonths: number;
  /** CLICK_RETENTION_DAYS: click records older than this are deleted (a domain may say otherwise); 0: forever */
  retentionDays: number;
  log: FastifyBaseLogger;
}

/**
 * The statistics and the click records of a link, as JSON routes inside an /api/v{n} context; on PostgreSQL
 * the upkeep of the click partitions; the click records' retention. (How clicks travel is click-ingest.ts's module.)
 */
export function createClicksModule(deps: ClicksModuleDeps) {
  const { links, paginator, clock, storage } = deps;
  const stats = createStatsService({ stats: createStatsRepository(storage), links, users: deps.users, clock });
  const records = createClickRecordsService({
    records: createClickRecordsRepository(storage.db, paginator),
    links,
    paginator,
  });
  const partitions = storage.dialect.rangePartitioning
    ? [
        {
          name: 'click-partitions',
          everyMs: CLICK_PARTITIONS_EVERY_MS,
          run: () =>
            maintainClickPartitions(
              storage.db as unknown as Kysely<unknown>,
              clock.now(),
              deps.retentionMonths,
              deps.log,
            ),
        },
      ]
    : [];
  // At start-up (in each instance: a changed CLICK_RETENTION_DAYS applies at once), then daily in turns among the
  // instances; cheap when no retention is set anywhere (one read of the domains).
  const retention = {
    name: 'click-retention',
    everyMs: CLICK_RETENTION_EVERY_MS,
    runAtStart: true,
    run: () =>
      deleteExpiredClicks({
        db: storage.db,
        clock,
        days: deps.retentionDays,
        partitioned: storage.dialect.rangePartitioning,
        log: deps.log,
      }),
  };
  return appModule({
    stats,
    schemas: clicksModuleSchemas,
    apiRoutes: (async (api, opts) => {
      await api.register(statsRoutes, { stats, version: opts.version });
      await api.register(clickRecordsRoutes, { records, version: opts.version });
    }) as FastifyPluginAsync<{ basePath: string; version: ApiVersion }>,
    jobs: [...partitions, retention],
  });
}
