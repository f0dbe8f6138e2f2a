import type { Kysely } from 'kysely';
import type { Database, JobLeaseRow } from '../db/types.js';

/** A try at a job's run: by `holder`, at `now`, for a job run every `everyMs`, holding it `leaseMs` at first. */
export interface Claim {
  name: string;
  holder: string;
  everyMs: number;
  now: number;
  leaseMs: number;
}

/**
 * The SQL of `job_leases` (migration 037) for the job runner (job-runner.ts). Instants come from the caller's
 * clock, so every instance must keep its clock in time (NTP): a skew of a few seconds shifts a turn by as much,
 * far less than a lease.
 */
export function createJobLeases(db: Kysely<Database>) {
  /** This run of the job, as the holder's row names it. */
  const ofRun = (name: string, holder: string, startedAt: number) =>
    db
      .updateTable('job_leases')
      .where('name', '=', name)
      .where('holder', '=', holder)
      .where('started_at', '=', startedAt);

  return {
    find: (name: string): Promise<JobLeaseRow | undefined> =>
      db.selectFrom('job_leases').selectAll().where('name', '=', name).executeTakeFirst(),

    /**
     * The job's next run for `holder`, if the last one started `everyMs` ago or more and nobody holds a lease on
     * it: one statement (an insert, or an update on conflict under that condition), so of several instances
     * claiming at once exactly one gets it, on SQLite as on PostgreSQL (whose ON CONFLICT DO UPDATE re-reads
     * the row another transaction just claimed, and finds the condition false).
     */
    async claim(run: Claim): Promise<boolean> {
      const { name, holder, now } = run;
      const claimed = { holder, lease_until: now + run.leaseMs, started_at: now, finished_at: null };
      const row = await db
        .insertInto('job_leases')
        .values({ name, ...claimed })
        .onConflict((oc) =>
          oc
            .column('name')
            .doUpdateSet(claimed)
            .where((eb) =>
              eb.and([
                eb.or([eb('job_leases.lease_until', 'is', null), eb('job_leases.lease_until', '<=', now)]),
                eb('job_leases.started_at', '<=', now - run.everyMs),
              ]),
            ),
        )
        .returning('name')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The heartbeat of a run still under way; false when the lease was lost (another instance took the job over). */
    async renew(name: string, holder: string, startedAt: number, leaseUntil: number): Promise<boolean> {
      const r = await ofRun(name, holder, startedAt)
        .where('lease_until', 'is not', null)
        .set({ lease_until: leaseUntil })
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /** The run ended: its lease is let go. False when it was no longer this holder's (taken over meanwhile). */
    async finish(name: string, holder: string, startedAt: number, now: number): Promise<boolean> {
      const r = await ofRun(name, holder, startedAt).set({ lease_until: null, finished_at: now }).executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /** Every lease `holder` still holds is let go (its runs are over, or will never finish). */
    async releaseAll(holder: string): Promise<void> {
      await db
        .updateTable('job_leases')
        .where('holder', '=', holder)
        .where('lease_until', 'is not', null)
        .set({ lease_until: null })
        .execute();
    },
  };
}

export type JobLeases = ReturnType<typeof createJobLeases>;
