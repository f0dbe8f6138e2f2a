import type { Selectable } from 'kysely';

/** A periodic job's turn among the instances (infra/job-runner.ts; migration 037). */
export interface JobLeasesTable {
  name: string;
  /** the instance that claimed the last run (host:pid:random) */
  holder: string;
  /** until when the holder owns the run it claimed; renewed while it runs, null once it finished or let go */
  lease_until: number | null;
  started_at: number;
  /** null while the run is under way, or when its instance died in it */
  finished_at: number | null;
}

export type JobLeaseRow = Selectable<JobLeasesTable>;
