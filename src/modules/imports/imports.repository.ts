import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import { recordEvents } from '../../db/outbox.js';
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
  linkId: number;
  seq: number;
  added: number;
  cursor: string | null;
  /** the item as the job lists it: an item imported before is listed only once it gets visits */
  item: { ref: string; outcome: ItemResult['outcome']; shortCode: string | null };
}

/** An item's visits so far: added to its import_links row, its mark moved on (a null one keeps the row's). */
const upsertImportedVisits = compiledInsert(['source_key', 'source_domain', 'source_code', 'link_id', 'visits', 'visits_cursor'] as const,
  (db: Kysely<Database>, rows: Array<{ source_key: string; source_domain: string; source_code: string; link_id: number; visits: number; visits_cursor: string | null }>) =>
    db.insertInto('import_links').values(rows).onConflict((oc) => oc.columns(['source_key', 'source_domain', 'source_code']).doUpdateSet((eb) => ({
      visits: eb('import_links.visits', '+', eb.ref('excluded.visits')),
      visits_cursor: eb.fn.coalesce('excluded.visits_cursor', 'import_links.visits_cursor'),
    }))));

/** The visits an item got in this run, on its row of the job (made for an item imported before). */
const upsertItemVisits = compiledInsert(['job_id', 'seq', 'source_ref', 'outcome', 'short_code', 'visits'] as const,
  (db: Kysely<Database>, rows: Array<{ job_id: number; seq: number; source_ref: string; outcome: ItemResult['outcome']; short_code: string | null; visits: number }>) =>
    db.insertInto('import_items').values(rows).onConflict((oc) => oc.columns(['job_id', 'seq']).doUpdateSet((eb) => ({
      visits: eb('import_items.visits', '+', eb.ref('excluded.visits')),
    }))));

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

    /**
     * Visits written in a chunk: each item's import_links row and its row of the job move with them, a few
     * statements for the whole chunk (the link ids are the rows' own: an upsert never inserts here).
     */
    async advanceVisits(tx: Tx, sourceKey: string, jobId: number, progress: readonly VisitProgress[]): Promise<void> {
      for (const part of chunks(progress)) {
        await upsertImportedVisits(tx, part.map((p) => ({
          source_key: sourceKey, source_domain: p.sourceDomain, source_code: p.sourceCode, link_id: p.linkId, visits: p.added, visits_cursor: p.cursor,
        })));
        const counted = part.filter((p) => p.added > 0);
        if (counted.length) {
          await upsertItemVisits(tx, counted.map((p) => ({
            job_id: jobId, seq: p.seq, source_ref: printable(p.item.ref).slice(0, 600), outcome: p.item.outcome, short_code: p.item.shortCode, visits: p.added,
          })));
        }
      }
    },

    /** The mark of the source's visit log its last whole run read through (YOURLS), or null. */
    async visitsMark(sourceKey: string): Promise<string | null> {
      const row = await deps.db.selectFrom('import_sources').select('visits_through').where('source_key', '=', sourceKey).executeTakeFirst();
      return row?.visits_through ?? null;
    },

    /** A whole run read the log through `mark`. */
    async setVisitsMark(sourceKey: string, mark: string, at: number): Promise<void> {
      await deps.db.insertInto('import_sources').values({ source_key: sourceKey, visits_through: mark, updated_at: at })
        .onConflict((oc) => oc.column('source_key').doUpdateSet({ visits_through: mark, updated_at: at })).execute();
    },

    /** How many items this source and owner brought before (the runner reads them all at once below a bound). */
    async priorCount(sourceKey: string): Promise<number> {
      const row = await deps.db.selectFrom('import_links').select((eb) => eb.fn.countAll<number>().as('n')).where('source_key', '=', sourceKey).executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** Every item this source and owner brought before: "domain/code" → what it brought. */
    async allPriors(sourceKey: string): Promise<Map<string, PriorImport>> {
      const rows = await deps.db.selectFrom('import_links').innerJoin('links', 'links.id', 'import_links.link_id')
        .select(['import_links.source_domain', 'import_links.source_code', 'import_links.link_id', 'import_links.visits', 'import_links.visits_cursor', 'links.short_code'])
        .where('import_links.source_key', '=', sourceKey).execute();
      return new Map(rows.map((r) => [`${r.source_domain}/${r.source_code}`, priorOf(r)]));
    },
  };
}

/** A job's end (done, failed, cancelled, interrupted), with its `import.completed` event in the same transaction. */
function createImportJobEnds(deps: { db: Kysely<Database>; dialect: Pick<Dialect, 'notify'> }) {
  const { db, dialect } = deps;
  /** A run's end as an event (db/outbox.ts), in the transaction that records it. */
  type Ended = Pick<ImportJobRow, 'id' | 'owner_id' | 'state'>;
  const announceEnd = (tx: Kysely<Database>, rows: readonly Ended[], at: number) =>
    recordEvents(tx, dialect, rows.map((r) => ({
      type: 'import.completed' as const, data: { import_id: Number(r.id), owner_id: r.owner_id, state: r.state },
    })), { at });
  return {
    async finishJob(id: number, state: ImportJobState, at: number, error: string | null): Promise<void> {
      await db.transaction().execute(async (tx) => {
        const rows = await tx.updateTable('import_jobs')
          .set({ state, updated_at: at, finished_at: at, heartbeat_at: null, error: error?.slice(0, 1000) ?? null })
          .where('id', '=', id).where('state', '=', 'running').returning(['id', 'owner_id', 'state']).execute();
        await announceEnd(tx, rows, at);
      });
    },

    /** Running jobs whose pulse stopped before `before` (their process is gone): interrupted, saying how to go on. */
    async interruptStale(before: number, at: number, error: string): Promise<number> {
      return db.transaction().execute(async (tx) => {
        const rows = await tx.updateTable('import_jobs')
          .set({ state: 'interrupted', error, finished_at: at, updated_at: at, heartbeat_at: null })
          .where('state', '=', 'running')
          .where((eb) => eb.or([eb('heartbeat_at', '<', before), eb('heartbeat_at', 'is', null)]))
          .returning(['id', 'owner_id', 'state']).execute();
        await announceEnd(tx, rows, at);
        return rows.length;
      });
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
    ...createImportJobEnds(deps),
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
