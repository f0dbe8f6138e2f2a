import type { Generated, Selectable } from 'kysely';

export type ImportJobState = 'running' | 'done' | 'failed' | 'interrupted' | 'cancelled';

export interface ImportJobsTable {
  id: Generated<number>;
  source: string;
  /** the source's kind and address (never a key): what makes a re-run "the same source" */
  source_key: string;
  /** JSON of the options, without the API key or a database password */
  options: string;
  owner_id: number | null;
  created_by: number | null;
  state: ImportJobState;
  dry_run: number;
  on_conflict: 'skip' | 'fail';
  items: Generated<number>;
  created: Generated<number>;
  unchanged: Generated<number>;
  conflicts: Generated<number>;
  failed: Generated<number>;
  visits: Generated<number>;
  /** visits left out: dated outside 1970–9999 */
  visits_skipped: Generated<number>;
  error: string | null;
  /** the running job's pulse; null once it ended */
  heartbeat_at: number | null;
  /** DELETE asked it to stop (any instance); the one running it stops at its next transaction boundary */
  cancel_requested_at: number | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export type ImportOutcome = 'created' | 'unchanged' | 'conflict' | 'failed' | 'would-create';

export interface ImportItemsTable {
  job_id: number;
  seq: number;
  /** the item as the source names it: "domain/code", or "line N" */
  source_ref: string;
  outcome: ImportOutcome;
  short_code: string | null;
  message: string | null;
  /** the error code the API would answer, for a failed item */
  error_code: string | null;
  /** visits the item brought in this run */
  visits: Generated<number>;
}

export interface ImportLinksTable {
  source_key: string;
  /** '' for the source's default domain */
  source_domain: string;
  source_code: string;
  link_id: number;
  /** the item's visits that are in Ferry */
  visits: Generated<number>;
  /** the source's mark of the last of them (ImportVisit.key); null: none yet */
  visits_cursor: string | null;
}

export type ImportJobRow = Selectable<ImportJobsTable>;

export interface ImportSourcesTable {
  /** as import_links.source_key: the source and the owner */
  source_key: string;
  /** the mark of the source's visit log its last whole run read through */
  visits_through: string;
  updated_at: number;
}
