import type { Selectable } from 'kysely';
import type { ImportJobRow } from '../../db/types.js';
import type { ImportItemsTable } from '../../db/types/imports.js';
import { isoTime } from '../../lib/common.schemas.js';
import type { ImportJob } from './imports.schemas.js';

/** An item of a job as the API lists it. */
type ItemRow = Pick<
  Selectable<ImportItemsTable>,
  'seq' | 'source_ref' | 'outcome' | 'short_code' | 'message' | 'error_code' | 'visits'
>;

/** A job's counts as the API and `ferry import` show them. */
export const jobProgress = (job: ImportJobRow) => ({
  items: Number(job.items),
  created: Number(job.created),
  unchanged: Number(job.unchanged),
  conflicts: Number(job.conflicts),
  failed: Number(job.failed),
  visits: Number(job.visits),
  visits_skipped: Number(job.visits_skipped),
});

/** The API's view of an import job (its items when given): the routes', and `import.completed`'s data (SPEC §22). */
export const jobView = (job: ImportJobRow, items: readonly ItemRow[] = []): ImportJob => ({
  id: Number(job.id),
  source: job.source as ImportJob['source'],
  state: job.state,
  dry_run: job.dry_run === 1,
  on_conflict: job.on_conflict,
  owner_id: job.owner_id === null ? null : Number(job.owner_id),
  progress: jobProgress(job),
  error: job.error,
  items: items.map((i) => ({
    seq: Number(i.seq),
    source: i.source_ref,
    outcome: i.outcome,
    short_code: i.short_code,
    message: i.message,
    error_code: i.error_code,
    visits: Number(i.visits),
  })),
  created_at: isoTime(Number(job.created_at)),
  updated_at: isoTime(Number(job.updated_at)),
  finished_at: job.finished_at === null ? null : isoTime(Number(job.finished_at)),
});
