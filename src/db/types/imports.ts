import type { Generated, Selectable } from 'kysely';

export type ImportJobState = 'running' | 'done' | 'failed' | 'interrupted';

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
  error: string | null;
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
}

export interface ImportLinksTable {
  source_key: string;
  /** '' for the source's default domain */
  source_domain: string;
  source_code: string;
  link_id: number;
}

export type ImportJobRow = Selectable<ImportJobsTable>;
