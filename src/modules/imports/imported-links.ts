import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/types.js';
import { compiledInsert } from '../../db/compiled-inserts.js';
import type { ItemResult, PriorImport } from './import-batch.js';
import { chunks, printable } from './import-rows.js';

type Tx = Transaction<Database>;

/**
 * Which link each source item became (import_links) and how far its visits came, and how far each source's visit
 * log was read (import_sources).
 */

const insertImportLinks = compiledInsert(
  ['source_key', 'source_domain', 'source_code', 'link_id', 'visits'] as const,
  (
    db: Kysely<Database>,
    rows: Array<{ source_key: string; source_domain: string; source_code: string; link_id: number; visits: number }>,
  ) => db.insertInto('import_links').values(rows),
);

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
const upsertImportedVisits = compiledInsert(
  ['source_key', 'source_domain', 'source_code', 'link_id', 'visits', 'visits_cursor'] as const,
  (
    db: Kysely<Database>,
    rows: Array<{
      source_key: string;
      source_domain: string;
      source_code: string;
      link_id: number;
      visits: number;
      visits_cursor: string | null;
    }>,
  ) =>
    db
      .insertInto('import_links')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['source_key', 'source_domain', 'source_code']).doUpdateSet((eb) => ({
          visits: eb('import_links.visits', '+', eb.ref('excluded.visits')),
          visits_cursor: eb.fn.coalesce('excluded.visits_cursor', 'import_links.visits_cursor'),
        })),
      ),
);

/** The visits an item got in this run, on its row of the job (made for an item imported before). */
const upsertItemVisits = compiledInsert(
  ['job_id', 'seq', 'source_ref', 'outcome', 'short_code', 'visits'] as const,
  (
    db: Kysely<Database>,
    rows: Array<{
      job_id: number;
      seq: number;
      source_ref: string;
      outcome: ItemResult['outcome'];
      short_code: string | null;
      visits: number;
    }>,
  ) =>
    db
      .insertInto('import_items')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['job_id', 'seq']).doUpdateSet((eb) => ({
          visits: eb('import_items.visits', '+', eb.ref('excluded.visits')),
        })),
      ),
);

const priorOf = (r: {
  link_id: number;
  visits: number;
  visits_cursor: string | null;
  short_code: string;
}): PriorImport => ({
  linkId: Number(r.link_id),
  shortCode: r.short_code,
  visits: Number(r.visits),
  cursor: r.visits_cursor,
});

/** What this source (for this owner) brought before: import_links, by the item's source domain and code. */
export function createPriorImports(deps: { db: Kysely<Database> }) {
  return {
    /** The earlier imports of these items: "domain/code" → what they brought (in `db`, a transaction, if given). */
    async priorImports(
      sourceKey: string,
      refs: readonly SourceRef[],
      db: Kysely<Database> = deps.db,
    ): Promise<Map<string, PriorImport>> {
      const found = new Map<string, PriorImport>();
      const byDomain = new Map<string, string[]>();
      for (const r of refs) (byDomain.get(r.domain) ?? byDomain.set(r.domain, []).get(r.domain)!).push(r.code);
      // By domain, so that every lookup is a search of the primary key (source_key, source_domain, source_code).
      for (const [domain, codes] of byDomain) {
        for (const part of chunks(codes)) {
          const rows = await db
            .selectFrom('import_links')
            .innerJoin('links', 'links.id', 'import_links.link_id')
            .select([
              'import_links.source_code',
              'import_links.link_id',
              'import_links.visits',
              'import_links.visits_cursor',
              'links.short_code',
            ])
            .where('import_links.source_key', '=', sourceKey)
            .where('import_links.source_domain', '=', domain)
            .where('import_links.source_code', 'in', part)
            .execute();
          for (const r of rows) found.set(`${domain}/${r.source_code}`, priorOf(r));
        }
      }
      return found;
    },

    /** How many items this source and owner brought before (the runner reads them all at once below a bound). */
    async priorCount(sourceKey: string): Promise<number> {
      const row = await deps.db
        .selectFrom('import_links')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('source_key', '=', sourceKey)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** Every item this source and owner brought before: "domain/code" → what it brought. */
    async allPriors(sourceKey: string): Promise<Map<string, PriorImport>> {
      const rows = await deps.db
        .selectFrom('import_links')
        .innerJoin('links', 'links.id', 'import_links.link_id')
        .select([
          'import_links.source_domain',
          'import_links.source_code',
          'import_links.link_id',
          'import_links.visits',
          'import_links.visits_cursor',
          'links.short_code',
        ])
        .where('import_links.source_key', '=', sourceKey)
        .execute();
      return new Map(rows.map((r) => [`${r.source_domain}/${r.source_code}`, priorOf(r)]));
    },
  };
}

/** Which link each item became and how far its visits came, written in the batch's transaction. */
export function createImportedLinkRecords() {
  return {
    async recordImportedLinks(
      tx: Tx,
      sourceKey: string,
      rows: ReadonlyArray<SourceRef & { linkId: number; visits: number }>,
    ): Promise<void> {
      for (const part of chunks(rows)) {
        await insertImportLinks(
          tx,
          part.map((r) => ({
            source_key: sourceKey,
            source_domain: r.domain,
            source_code: r.code,
            link_id: r.linkId,
            visits: r.visits,
          })),
        );
      }
    },

    /**
     * Visits written in a chunk: each item's import_links row and its row of the job move with them, a few
     * statements for the whole chunk (the link ids are the rows' own: an upsert never inserts here).
     */
    async advanceVisits(tx: Tx, sourceKey: string, jobId: number, progress: readonly VisitProgress[]): Promise<void> {
      for (const part of chunks(progress)) {
        await upsertImportedVisits(
          tx,
          part.map((p) => ({
            source_key: sourceKey,
            source_domain: p.sourceDomain,
            source_code: p.sourceCode,
            link_id: p.linkId,
            visits: p.added,
            visits_cursor: p.cursor,
          })),
        );
        const counted = part.filter((p) => p.added > 0);
        if (counted.length) {
          await upsertItemVisits(
            tx,
            counted.map((p) => ({
              job_id: jobId,
              seq: p.seq,
              source_ref: printable(p.item.ref).slice(0, 600),
              outcome: p.item.outcome,
              short_code: p.item.shortCode,
              visits: p.added,
            })),
          );
        }
      }
    },
  };
}

/** How far a source's visit log was read (import_sources): where the next run of YOURLS's visits starts. */
export function createVisitMarks(deps: { db: Kysely<Database> }) {
  return {
    /** The mark of the source's visit log its last whole run read through (YOURLS), or null. */
    async visitsMark(sourceKey: string): Promise<string | null> {
      const row = await deps.db
        .selectFrom('import_sources')
        .select('visits_through')
        .where('source_key', '=', sourceKey)
        .executeTakeFirst();
      return row?.visits_through ?? null;
    },

    /** A whole run read the log through `mark`. */
    async setVisitsMark(sourceKey: string, mark: string, at: number): Promise<void> {
      await deps.db
        .insertInto('import_sources')
        .values({ source_key: sourceKey, visits_through: mark, updated_at: at })
        .onConflict((oc) => oc.column('source_key').doUpdateSet({ visits_through: mark, updated_at: at }))
        .execute();
    },
  };
}
