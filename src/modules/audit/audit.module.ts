import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import { createAuditRepository } from './audit.repository.js';
import { auditRoutes } from './audit.routes.js';
import { auditSchemas } from './audit.schemas.js';
import { createAuditService } from './audit.service.js';

const SWEEP_EVERY_MS = 3_600_000;

/**
 * The audit log's reading and upkeep (SPEC §23). Entries are written by each action's own transaction through
 * db/audit-log.ts `recordAudit`; this module lists them for admins and sweeps those past AUDIT_RETENTION_DAYS.
 */
export function createAuditModule(deps: {
  db: Kysely<Database>;
  clock: Clock;
  paginator: Paginator;
  retentionDays: number;
}) {
  const audit = createAuditService({ ...deps, repository: createAuditRepository(deps.db, deps.paginator) });
  return appModule({
    audit,
    schemas: auditSchemas,
    apiRoutes: async (api, { version }) => {
      await api.register(auditRoutes, { audit, version });
    },
    jobs: [{ name: 'sweep-audit-log', everyMs: SWEEP_EVERY_MS, run: () => audit.sweep() }],
  });
}
