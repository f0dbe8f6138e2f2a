import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database, ImportJobRow, ImportJobState } from '../../db/types.js';
import { compiledInsert } from '../../db/compiled-inserts.js';
import type { ClickEvent } from '../clicks/index.js';
import type { ItemResult, JobCounts, PriorImport } from './import-batch.js';
import { createImportDomains } from './import-domains.js';

type Tx = Transaction<Database>;

/**
 * A source's text as the job shows it: control characters as U+FFFD. An item's reference and reason quote the
 * source (its code, a cell), which may hold anything — a NUL, which PostgreSQL's text refuses.
 */
const printable = (text: string): string => text.replace(/\p{Cc}/gu, '\uFFFD');

/** Rows per multi-row statement: well below both engines' limits on bound parameters. */
const CHUNK = 400;
const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

const insertImportLinks = compiledInsert(['source_key', 'source_domain', 'source_code', 'link_id', 'visits'] as const,
  (db: Kysely<Database>, rows: Array<{ source_key: string; source_domain: string; source_code: string; link_id: number; visits: number }>) =>
    db.insertInto('import_links').values(rows));

const insertImportItems = compiledInsert(['job_id', 'seq', 'source_ref', 'outcome', 'short_code', 'message', 'error_code'] as const,
  (db: Kysely<Database>, rows: Array<{ job_id: number; seq: number; source_ref: string; outcome: ItemResult['outcome']; short_code: string | null; message: string | null; error_code: string | null }>) =>
    db.insertInto('import_items').values(rows));

/** An item of a source: its domain ('' for the source's default) and code. */
export interface SourceRef {
  domain: string;
  code: string;
}

/** Where an item's visits came to in a chunk: added to its import_links row and its item of this job. */
export interface VisitProgress {
  sourceDomain: string;
  sourceCode: string;
  seq: number;
  added: number;
  cursor: string | null;
}

const priorOf = (r: { link_id: number; visits: number; visits_cursor: string | null; short_code: string }): PriorImport => ({
  linkId: Number(r.link_id), shortCode: r.short_code, visits: Number(r.visits), cursor: r.visits_cursor,
});

/** What this source (for this owner) brought before: import_links, by the item's source domain and code. */
function createImportedLinks(deps: { db: Kysely<Database> }) {
  return {
    /** The earlier imports of these items: "domain/code" → what they brought (in `db`, a transaction, if given). */
    async priorImports(sourceKey: string, refs: readonly SourceRef[], db: Kysely<Database> = deps.db): Promise<Map<string, PriorImport>> {
      const found = new Map<string, PriorImport>();
      const byDomain = new Map<string, string[]>();
      for (const r of refs) (byDomain.get(r.domain) ?? byDomain.set(r.domain, []).get(r.domain)!).push(r.code);
      // By domain, so that every lookup is a search of the primary key (source_key, source_domain, source_code).
      for (const [domain, codes] of byDomain) {
        for (const part of chunks(codes)) {
          const rows = await db.selectFrom('import_links').innerJoin('links', 'links.id', 'import_links.link_id')
            .select(['import_links.source_code', 'import_links.link_id', 'import_links.visits', 'import_links.visits_cursor', 'links.short_code'])
            .where('import_links.source_key', '=', sourceKey).where('import_links.source_domain', '=', domain).where('import_links.source_code', 'in', part).execute();
          for (const r of rows) found.set(`${domain}/${r.source_code}`, priorOf(r));
        }
      }
      return found;
    },

    async recordImportedLinks(tx: Tx, sourceKey: string, rows: ReadonlyArray<SourceRef & { linkId: number; visits: number }>): Promise<void> {
      for (const part of chunks(rows)) {
        await insertImportLinks(tx, part.map((r) => ({ source_key: sourceKey, source_domain: r.domain, source_code: r.code, link_id: r.linkId, visits: r.visits })));
      }
    },

    /** A source that only counts visits (Kutt): the count this run brought. */
    async setCountedVisits(tx: Tx, sourceKey: string, ref: SourceRef, visits: number): Promise<void> {
      await tx.updateTable('import_links').set({ visits }).where('source_key', '=', sourceKey).where('source_domain', '=', ref.domain).where('source_code', '=', ref.code).execute();
    },

    /** Visits written in a chunk: each item's import_links row and its item of the job move with them. */
    async advanceVisits(tx: Tx, sourceKey: string, jobId: number, progress: readonly VisitProgress[]): Promise<void> {
      for (const p of progress) {
        await tx.updateTable('import_links').set((eb) => ({ visits: eb('visits', '+', p.added), ...(p.cursor !== null ? { visits_cursor: p.cursor } : {}) }))
          .where('source_key', '=', sourceKey).where('source_domain', '=', p.sourceDomain).where('source_code', '=', p.sourceCode).execute();
        if (p.added > 0) {
          await tx.updateTable('import_items').set((eb) => ({ visits: eb('visits', '+', p.added) })).where('job_id', '=', jobId).where('seq', '=', p.seq).execute();
        }
      }
    },
  };
}

/** The import's own tables: the job, its counts, its pulse and its items' outcomes. */
function createImportJobRecords(deps: { db: Kysely<Database>; dialect: Pick<Dialect, 'preferIndexLookups'> }) {
  const { db, dialect } = deps;
  return {
    transaction: <T>(work: (tx: Tx) => Promise<T>): Promise<T> => db.transaction().execute(async (tx) => {
      await dialect.preferIndexLookups(tx);
      return work(tx);
    }),

    async createJob(row: Omit<ImportJobRow, 'id' | 'items' | 'created' | 'unchanged' | 'conflicts' | 'failed' | 'visits' | 'visits_skipped' | 'cancel_requested_at'>): Promise<ImportJobRow> {
      return db.insertInto('import_jobs').values(row).returningAll().executeTakeFirstOrThrow();
    },

    findJob: (id: number): Promise<ImportJobRow | undefined> => db.selectFrom('import_jobs').selectAll().where('id', '=', id).executeTakeFirst(),

    async finishJob(id: number, state: ImportJobState, at: number, error: string | null): Promise<void> {
      await db.updateTable('import_jobs').set({ state, updated_at: at, finished_at: at, heartbeat_at: null, error: error?.slice(0, 1000) ?? null })
        .where('id', '=', id).where('state', '=', 'running').execute();
    },

    /** The running job's pulse; answers whether someone asked it to stop (DELETE on any instance). */
    async heartbeat(id: number, at: number): Promise<{ cancelRequested: boolean }> {
      await db.updateTable('import_jobs').set({ heartbeat_at: at }).where('id', '=', id).where('state', '=', 'running').execute();
      const row = await db.selectFrom('import_jobs').select('cancel_requested_at').where('id', '=', id).executeTakeFirst();
      return { cancelRequested: row?.cancel_requested_at != null };
    },

    /** DELETE: asks a running job to stop; false when it is not running. */
    async requestCancel(id: number, at: number): Promise<boolean> {
      const r = await db.updateTable('import_jobs').set({ cancel_requested_at: at }).where('id', '=', id).where('state', '=', 'running').executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** Running jobs whose pulse stopped before `before` (their process is gone): interrupted, saying how to go on. */
    async interruptStale(before: number, at: number, error: string): Promise<number> {
      const r = await db.updateTable('import_jobs').set({ state: 'interrupted', error, finished_at: at, updated_at: at, heartbeat_at: null })
        .where('state', '=', 'running').where((eb) => eb.or([eb('heartbeat_at', '<', before), eb('heartbeat_at', 'is', null)])).executeTakeFirst();
      return Number(r.numUpdatedRows);
    },

    /** The items of a job that were not simply created, in source order (the job resource lists them). */
    async problemItems(jobId: number, limit: number) {
      return db.selectFrom('import_items').select(['seq', 'source_ref', 'outcome', 'short_code', 'message', 'error_code', 'visits'])
        .where('job_id', '=', jobId)
        .where((eb) => eb.or([eb('outcome', 'not in', ['created', 'would-create']), eb('message', 'is not', null), eb.and([eb('outcome', '=', 'unchanged'), eb('visits', '>', 0)])]))
        .orderBy('seq').limit(limit).execute();
    },

    /** The items' outcomes, in the batch's transaction. */
    async recordItems(tx: Kysely<Database>, jobId: number, results: readonly ItemResult[]): Promise<void> {
      for (const part of chunks(results)) {
        await insertImportItems(tx, part.map((r) => ({
          job_id: jobId, seq: r.seq, source_ref: printable(r.ref).slice(0, 600), outcome: r.outcome, short_code: r.shortCode,
          message: r.message === null ? null : printable(r.message).slice(0, 1000), error_code: r.errorCode,
        })));
      }
    },

    /** Adds to the job's counts, in the transaction that wrote what they count. */
    async addCounts(tx: Kysely<Database>, jobId: number, counts: Partial<JobCounts>, at: number): Promise<void> {
      const n = (k: keyof JobCounts) => counts[k] ?? 0;
      await tx.updateTable('import_jobs').set((eb) => ({
        items: eb('items', '+', n('items')), created: eb('created', '+', n('created')), unchanged: eb('unchanged', '+', n('unchanged')),
        conflicts: eb('conflicts', '+', n('conflicts')), failed: eb('failed', '+', n('failed')), visits: eb('visits', '+', n('visits')),
        visits_skipped: eb('visits_skipped', '+', n('visitsSkipped')), updated_at: at,
      })).where('id', '=', jobId).execute();
    },
  };
}

export type ImportsRepository = ReturnType<typeof createImportsRepository>;

/**
 * The import's own tables — jobs, their items, and which link each source item became (with how far its
 * visits came) — plus the domains an import puts links on. Plain statements inside the caller's transaction,
 * the same SQL on both engines; the links themselves are written by the links module (LinkImports).
 */
export function createImportsRepository(deps: { db: Kysely<Database>; dialect: Dialect }) {
  return {
    ...createImportJobRecords(deps),
    ...createImportedLinks(deps),
    ...createImportDomains(deps),
  };
}

export type ImportedClickWriter = (tx: Tx, batch: readonly ClickEvent[]) => Promise<void>;

/** The owner of imported links: the named user, or the oldest active admin. */
export async function findImportOwner(db: Kysely<Database>, username: string | undefined): Promise<{ id: number; username: string; role: 'user' | 'admin' } | undefined> {
  let q = db.selectFrom('users').select(['id', 'username', 'role']).where('status', '=', 'active');
  q = username !== undefined ? q.where('username_lower', '=', username.toLowerCase()) : q.where('role', '=', 'admin').orderBy('created_at').orderBy('id');
  const row = await q.limit(1).executeTakeFirst();
  return row ? { id: Number(row.id), username: row.username, role: row.role } : undefined;
}
