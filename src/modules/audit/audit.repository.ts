import type { Kysely } from 'kysely';
import type { AuditAction } from '../../db/audit-log.js';
import type { AuditLogRow, Database } from '../../db/types.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';

export interface AuditFilters {
  actorId?: number;
  action?: AuditAction;
  since?: number;
  until?: number;
}

export type AuditRepository = ReturnType<typeof createAuditRepository>;

/**
 * Reads of the audit log, newest first by (`at`, `id`). Every filter a page is asked by leads an index
 * (migration 045: `at`, `actor_id`+`at`, `action`+`at`), so a page is one index range read backwards that
 * stops at the limit, whatever the log's size (bench/audit-log.ts).
 */
export function createAuditRepository(db: Kysely<Database>, paginator: Paginator) {
  return {
    async page(filters: AuditFilters, list: ResolvedList): Promise<AuditLogRow[]> {
      let q = db.selectFrom('audit_log').selectAll('audit_log');
      if (filters.actorId !== undefined) q = q.where('actor_id', '=', filters.actorId);
      if (filters.action !== undefined) q = q.where('action', '=', filters.action);
      if (filters.since !== undefined) q = q.where('at', '>=', filters.since);
      if (filters.until !== undefined) q = q.where('at', '<', filters.until);
      return paginator.apply(q, list, 'audit_log').execute();
    },
  };
}
