import { recordAudit, type AuditEntry } from '../../db/audit-log.js';
import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import { recordEvents } from '../../db/outbox.js';
import { recordPublicEvents } from '../../db/events.js';
import { jobView } from './import-job-view.js';
import type { Database, ImportJobRow, ImportJobState } from '../../db/types.js';
import { compiledInsert } from '../../db/compiled-inserts.js';
import type { ItemResult, JobCounts } from './import-batch.js';
import { chunks, printable } from './import-rows.js';

type Tx = Transaction<Database>;

/**
 * An import job's records (import_jobs, import_items): its row from creation to its end, and its items' outcomes
 * and counts.
 */

/** A job's end (done, failed, cancelled, interrupted), with its `import.completed` event in the same transaction. */
export function createImportJobEnds(deps: { db: Kysely<Database>; dialect: Pick<Dialect, 'notify'> }) {
  const { db, dialect } = deps;
  /** A run's end as an event (db/outbox.ts), in the transaction that records it. */
  const announceEnd = async (tx: Kysely<Database>, rows: readonly ImportJobRow[], at: number) => {
    // SPEC §22's `import.completed`: the job as the API shows it (without its items), whose it is.
    await recordPublicEvents(
      tx,
      dialect,
      rows.map((r) => ({
        type: 'import.completed' as const,
        data: jobView(r),
        userId: r.owner_id === null ? null : Number(r.owner_id),
      })),
      { at },
    );
    await recordEvents(
      tx,
      dialect,
      rows.map((r) => ({
        type: 'import.completed' as const,
        data: { import_id: Number(r.id), owner_id: r.owner_id, state: r.state },
      })),
      { at },
    );
  };
  return {
    async finishJob(id: number, state: ImportJobState, at: number, error: string | null): Promise<void> {
      await db.transaction().execute(async (tx) => {
        const rows = await tx
          .updateTable('import_jobs')
          .set({ state, updated_at: at, finished_at: at, heartbeat_at: null, error: error?.slice(0, 1000) ?? null })
          .where('id', '=', id)
          .where('state', '=', 'running')
          .returningAll()
          .execute();
        await announceEnd(tx, rows, at);
      });
    },

    /** Running jobs whose pulse stopped before `before` (their process is gone): interrupted, saying how to go on. */
    async interruptStale(before: number, at: number, error: string): Promise<number> {
      return db.transaction().execute(async (tx) => {
        const rows = await tx
          .updateTable('import_jobs')
          .set({ state: 'interrupted', error, finished_at: at, updated_at: at, heartbeat_at: null })
          .where('state', '=', 'running')
          .where((eb) => eb.or([eb('heartbeat_at', '<', before), eb('heartbeat_at', 'is', null)]))
          .returningAll()
          .execute();
        await announceEnd(tx, rows, at);
        return rows.length;
      });
    },
  };
}

/** The job's row: created, found, its pulse, a request to stop; and the transaction a batch runs in. */
export function createImportJobRecords(deps: { db: Kysely<Database>; dialect: Pick<Dialect, 'preferIndexLookups'> }) {
  const { db, dialect } = deps;
  return {
    transaction: <T>(work: (tx: Tx) => Promise<T>): Promise<T> =>
      db.transaction().execute(async (tx) => {
        await dialect.preferIndexLookups(tx);
        return work(tx);
      }),

    async createJob(
      row: Omit<
        ImportJobRow,
        | 'id'
        | 'items'
        | 'created'
        | 'unchanged'
        | 'conflicts'
        | 'failed'
        | 'visits'
        | 'visits_skipped'
        | 'cancel_requested_at'
      >,
      audit?: Omit<AuditEntry, 'target'>,
    ): Promise<ImportJobRow> {
      return db.transaction().execute(async (tx) => {
        const job = await tx.insertInto('import_jobs').values(row).returningAll().executeTakeFirstOrThrow();
        if (audit) await recordAudit(tx, { ...audit, target: { type: 'import', id: job.id } });
        return job;
      });
    },

    findJob: (id: number): Promise<ImportJobRow | undefined> =>
      db.selectFrom('import_jobs').selectAll().where('id', '=', id).executeTakeFirst(),

    /** The running job's pulse; answers whether someone asked it to stop (DELETE on any instance). */
    async heartbeat(id: number, at: number): Promise<{ cancelRequested: boolean }> {
      await db
        .updateTable('import_jobs')
        .set({ heartbeat_at: at })
        .where('id', '=', id)
        .where('state', '=', 'running')
        .execute();
      const row = await db
        .selectFrom('import_jobs')
        .select('cancel_requested_at')
        .where('id', '=', id)
        .executeTakeFirst();
      return { cancelRequested: row?.cancel_requested_at != null };
    },

    /** DELETE: asks a running job to stop; false when it is not running. */
    async requestCancel(id: number, at: number): Promise<boolean> {
      const r = await db
        .updateTable('import_jobs')
        .set({ cancel_requested_at: at })
        .where('id', '=', id)
        .where('state', '=', 'running')
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
  };
}

const insertImportItems = compiledInsert(
  ['job_id', 'seq', 'source_ref', 'outcome', 'short_code', 'message', 'error_code'] as const,
  (
    db: Kysely<Database>,
    rows: Array<{
      job_id: number;
      seq: number;
      source_ref: string;
      outcome: ItemResult['outcome'];
      short_code: string | null;
      message: string | null;
      error_code: string | null;
    }>,
  ) => db.insertInto('import_items').values(rows),
);

/** What a batch records of the job: its items' outcomes and its counts (and the items the job resource lists). */
export function createImportItemRecords(deps: { db: Kysely<Database> }) {
  const { db } = deps;
  return {
    /** The items of a job that were not simply created, in source order (the job resource lists them). */
    async problemItems(jobId: number, limit: number) {
      return db
        .selectFrom('import_items')
        .select(['seq', 'source_ref', 'outcome', 'short_code', 'message', 'error_code', 'visits'])
        .where('job_id', '=', jobId)
        .where((eb) =>
          eb.or([
            eb('outcome', 'not in', ['created', 'would-create']),
            eb('message', 'is not', null),
            eb.and([eb('outcome', '=', 'unchanged'), eb('visits', '>', 0)]),
          ]),
        )
        .orderBy('seq')
        .limit(limit)
        .execute();
    },

    /** The items' outcomes, in the batch's transaction. */
    async recordItems(tx: Kysely<Database>, jobId: number, results: readonly ItemResult[]): Promise<void> {
      for (const part of chunks(results)) {
        await insertImportItems(
          tx,
          part.map((r) => ({
            job_id: jobId,
            seq: r.seq,
            source_ref: printable(r.ref).slice(0, 600),
            outcome: r.outcome,
            short_code: r.shortCode,
            message: r.message === null ? null : printable(r.message).slice(0, 1000),
            error_code: r.errorCode,
          })),
        );
      }
    },

    /** Adds to the job's counts, in the transaction that wrote what they count. */
    async addCounts(tx: Kysely<Database>, jobId: number, counts: Partial<JobCounts>, at: number): Promise<void> {
      const n = (k: keyof JobCounts) => counts[k] ?? 0;
      await tx
        .updateTable('import_jobs')
        .set((eb) => ({
          items: eb('items', '+', n('items')),
          created: eb('created', '+', n('created')),
          unchanged: eb('unchanged', '+', n('unchanged')),
          conflicts: eb('conflicts', '+', n('conflicts')),
          failed: eb('failed', '+', n('failed')),
          visits: eb('visits', '+', n('visits')),
          visits_skipped: eb('visits_skipped', '+', n('visitsSkipped')),
          updated_at: at,
        }))
        .where('id', '=', jobId)
        .execute();
    },
  };
}
