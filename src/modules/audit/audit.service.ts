import { sweepAuditLog } from '../../db/audit-log.js';
import type { AuditLogRow, Database } from '../../db/types.js';
import { validationError, type ErrorDetail } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isoTime } from '../../lib/common.schemas.js';
import { INSTANT_RULE, parseInstant } from '../../lib/instant.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import type { Kysely } from 'kysely';
import type { AuditFilters, AuditRepository } from './audit.repository.js';
import type { AuditListQueryT } from './audit.schemas.js';

export type AuditService = ReturnType<typeof createAuditService>;

export interface AuditEntryView {
  id: number;
  at: string;
  actor_id: number | null;
  actor: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  details: Record<string, unknown> | null;
}

const toView = (row: AuditLogRow): AuditEntryView => ({
  id: Number(row.id),
  at: isoTime(Number(row.at)),
  actor_id: row.actor_id === null ? null : Number(row.actor_id),
  actor: row.actor,
  action: row.action,
  target_type: row.target_type,
  target_id: row.target_id,
  ip: row.ip,
  details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
});

const DAY_MS = 86_400_000;

/** SPEC §23's audit log: the admins' list (cursor pages, newest first) and the retention sweep. */
export function createAuditService(deps: {
  db: Kysely<Database>;
  repository: AuditRepository;
  paginator: Paginator;
  clock: Clock;
  retentionDays: number;
}) {
  const { repository, paginator } = deps;
  return {
    async list(query: AuditListQueryT, requestUrl: string): Promise<PageResult<AuditEntryView>> {
      const problems: ErrorDetail[] = [];
      const instant = (field: 'since' | 'until'): number | undefined => {
        const raw = query[field];
        if (raw === undefined) return undefined;
        const ms = parseInstant(raw);
        if (ms === null) problems.push({ field, message: INSTANT_RULE });
        return ms ?? undefined;
      };
      const filters: AuditFilters = {
        ...(query.actor_id !== undefined ? { actorId: query.actor_id } : {}),
        ...(query.action !== undefined ? { action: query.action } : {}),
      };
      const since = instant('since');
      const until = instant('until');
      if (problems.length) throw validationError(problems, 'Query is invalid');
      if (since !== undefined) filters.since = since;
      if (until !== undefined) filters.until = until;
      const list = paginator.resolve(
        {
          ...(query.limit !== undefined ? { limit: query.limit } : {}),
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
          order: 'desc',
        },
        { at: 'at' },
        { ...filters },
        true,
      );
      const rows = await repository.page(filters, list);
      return paginator.page(rows, list, null, requestUrl, toView, (r) => Number(r.at));
    },

    /** Drops the entries older than AUDIT_RETENTION_DAYS, in batches; how many. */
    sweep: (): Promise<number> => sweepAuditLog(deps.db, deps.clock.now() - deps.retentionDays * DAY_MS),
  };
}
