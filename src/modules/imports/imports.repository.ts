import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database, ImportJobRow, NewLinkRow } from '../../db/types.js';
import { changeMessage, CODES_ADDED, LINK_CHANGES_CHANNEL } from '../../infra/pg-link-cache-bus.js';
import { compiledInsert } from '../../db/compiled-inserts.js';
import type { ClickEvent } from '../clicks/index.js';
import { claimDomain, findDomainFor } from '../domains/index.js';
import type { ItemResult, JobCounts } from './import-batch.js';

type Tx = Transaction<Database>;

/** Rows per multi-row statement: well below both engines' limits on bound parameters. */
const CHUNK = 400;
const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/** Codes on their domains, those already issued left alone (live or retired): the ones inserted come back. */
const insertCodes = compiledInsert(['domain_id', 'code', 'link_id'] as const, (db: Kysely<Database>, rows: Array<{ domain_id: number; code: string; link_id: number | null }>) =>
  db.insertInto('link_codes').values(rows).onConflict((oc) => oc.doNothing()).returning('code'));

const LINK_COLUMNS = [
  'short_code', 'domain_id', 'user_id', 'original_url', 'expires_at', 'created_at', 'updated_at', 'max_visits', 'forward_query',
  'password_hash', 'tags', 'title', 'aliases', 'click_count',
] as const;
/** Exactly the columns the statement writes (a property beyond them would not be written). */
type ImportLinkRow = Pick<NewLinkRow, (typeof LINK_COLUMNS)[number]> & { short_code: string; domain_id: number };
const insertLinkRows = compiledInsert(LINK_COLUMNS, (db: Kysely<Database>, rows: ImportLinkRow[]) =>
  db.insertInto('links').values(rows).returning(['id', 'short_code', 'domain_id']));

const insertTags = compiledInsert(['link_id', 'tag'] as const, (db: Kysely<Database>, rows: Array<{ link_id: number; tag: string }>) =>
  db.insertInto('link_tags').values(rows));

const insertImportLinks = compiledInsert(['source_key', 'source_domain', 'source_code', 'link_id'] as const,
  (db: Kysely<Database>, rows: Array<{ source_key: string; source_domain: string; source_code: string; link_id: number }>) => db.insertInto('import_links').values(rows));

const insertImportItems = compiledInsert(['job_id', 'seq', 'source_ref', 'outcome', 'short_code', 'message'] as const,
  (db: Kysely<Database>, rows: Array<{ job_id: number; seq: number; source_ref: string; outcome: ItemResult['outcome']; short_code: string | null; message: string | null }>) =>
    db.insertInto('import_items').values(rows));

/** A code on a domain (0: the default domain). */
export interface DomainCode {
  domainId: number;
  code: string;
}

/** The codes grouped by their domain (a source's host name, or Ferry's domain id). */
const codesByDomain = <T extends { code: string }, D>(items: Iterable<T>, domainOf: (item: T) => D): Map<D, string[]> => {
  const out = new Map<D, string[]>();
  for (const item of items) {
    const domain = domainOf(item);
    (out.get(domain) ?? out.set(domain, []).get(domain)!).push(item.code);
  }
  return out;
};

export type ImportsRepository = ReturnType<typeof createImportsRepository>;

const aliasesOf = (row: NewLinkRow): string[] => (row.aliases ? String(row.aliases).split(',') : []);

/**
 * The aliases of new links, on their links' domains (SPEC §20: rows of link_codes naming their link). The batch
 * found them free in its transaction; one taken since (a link created meanwhile) fails the batch, as a code does.
 */
async function claimAliases(tx: Tx, rows: ReadonlyArray<{ domain_id: number; code: string; link_id: number }>): Promise<void> {
  for (const part of chunks(rows)) {
    const claimed = await insertCodes(tx, part);
    if (claimed.length !== part.length) throw new Error('an alias was taken while the import ran; run it again to go on');
  }
}

export interface NewImportLink {
  row: ImportLinkRow;
  sourceDomain: string;
  sourceCode: string;
}

/** Which of these source codes this source already brought over. */
async function alreadyImported(tx: Kysely<Database>, sourceKey: string, keys: ReadonlyArray<{ domain: string; code: string }>): Promise<Set<string>> {
  const found = new Set<string>();
  // By domain, so that every lookup is a search of the primary key (source_key, source_domain, source_code):
  // the codes alone left SQLite scanning every row this source brought before, at every batch.
  for (const [domain, codes] of codesByDomain(keys, (k) => k.domain)) {
    for (const part of chunks(codes)) {
      const rows = await tx.selectFrom('import_links').select('source_code')
        .where('source_key', '=', sourceKey).where('source_domain', '=', domain).where('source_code', 'in', part).execute();
      for (const r of rows) found.add(`${domain}/${r.source_code}`);
    }
  }
  return found;
}

/** Which of these codes are issued already on their domains (live or tombstoned): "domainId/code" keys. */
async function takenCodes(tx: Kysely<Database>, codes: readonly DomainCode[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (const [domainId, ofDomain] of codesByDomain(codes, (c) => c.domainId)) {
    for (const part of chunks(ofDomain)) {
      for (const r of await tx.selectFrom('link_codes').select('code').where('domain_id', '=', domainId).where('code', 'in', part).execute()) taken.add(`${domainId}/${r.code}`);
    }
  }
  return taken;
}

/** Claims the codes of a domain that are free; returns those it claimed. */
async function claimCodes(tx: Tx, domainId: number, codes: readonly string[]): Promise<Set<string>> {
  const claimed = new Set<string>();
  for (const part of chunks(codes)) {
    for (const r of await insertCodes(tx, part.map((code) => ({ domain_id: domainId, code, link_id: null })))) claimed.add(r.code);
  }
  return claimed;
}

/** Adds the source's own count where it is more than the visit records brought (YOURLS without its log). */
async function raiseClickCount(tx: Tx, linkId: number, count: number): Promise<void> {
  await tx.updateTable('links').set({ click_count: sql`case when click_count < ${count} then ${count} else click_count end` }).where('id', '=', linkId).execute();
}

/** The import's own tables: the job, its counts and its items' outcomes. */
function createImportJobRecords(deps: { db: Kysely<Database>; dialect: Pick<Dialect, 'preferIndexLookups'> }) {
  const { db, dialect } = deps;
  return {
    transaction: <T>(work: (tx: Tx) => Promise<T>): Promise<T> => db.transaction().execute(async (tx) => {
      await dialect.preferIndexLookups(tx);
      return work(tx);
    }),

    async createJob(row: Omit<ImportJobRow, 'id' | 'items' | 'created' | 'unchanged' | 'conflicts' | 'failed' | 'visits'>): Promise<ImportJobRow> {
      return db.insertInto('import_jobs').values(row).returningAll().executeTakeFirstOrThrow();
    },

    findJob: (id: number): Promise<ImportJobRow | undefined> => db.selectFrom('import_jobs').selectAll().where('id', '=', id).executeTakeFirst(),

    async finishJob(id: number, state: ImportJobRow['state'], at: number, error: string | null): Promise<void> {
      await db.updateTable('import_jobs').set({ state, updated_at: at, finished_at: at, error: error?.slice(0, 1000) ?? null }).where('id', '=', id).execute();
    },

    /** The items of a job that were not simply created, in source order (the job resource lists them). */
    async problemItems(jobId: number, limit: number) {
      return db.selectFrom('import_items').select(['seq', 'source_ref', 'outcome', 'short_code', 'message'])
        .where('job_id', '=', jobId).where((eb) => eb.or([eb('outcome', 'not in', ['created', 'would-create']), eb('message', 'is not', null)]))
        .orderBy('seq').limit(limit).execute();
    },

    /** The items' outcomes and the job's counts, in the batch's transaction. */
    async recordItems(tx: Kysely<Database>, jobId: number, results: readonly ItemResult[], counts: JobCounts, at: number): Promise<void> {
      for (const part of chunks(results)) {
        await insertImportItems(tx, part.map((r) => ({
          job_id: jobId, seq: r.seq, source_ref: r.ref.slice(0, 600), outcome: r.outcome, short_code: r.shortCode, message: r.message?.slice(0, 1000) ?? null,
        })));
      }
      await tx.updateTable('import_jobs').set((eb) => ({
        items: eb('items', '+', counts.items), created: eb('created', '+', counts.created), unchanged: eb('unchanged', '+', counts.unchanged),
        conflicts: eb('conflicts', '+', counts.conflicts), failed: eb('failed', '+', counts.failed), visits: eb('visits', '+', counts.visits), updated_at: at,
      })).where('id', '=', jobId).execute();
    },
  };
}

/**
 * The domains and links an import adds, announced as the API announces its own: on the link-change channel, on
 * commit.
 */
function createImportedLinkWrites(deps: { dialect: Pick<Dialect, 'notify'> }) {
  const { dialect } = deps;
  return {
    /**
     * The ids of these host names' domains (SPEC §19). With `create`, a missing one is made, unverified, for
     * `create.ownerId` (the importing admin) and announced like a domain made through the API; without it
     * (a dry run) a missing one is absent from the answer.
     */
    /**
     * The domain of each host name as the importing admin (`ownerId`) sees it (the domains module's rule: the
     * verified one, their own claim, else the oldest claim); with `create`, a claim of theirs for a name nobody
     * claimed.
     */
    async domainIds(tx: Tx, hostnames: readonly string[], ownerId: number, create: { at: number } | null): Promise<Map<string, number>> {
      const ids = new Map<string, number>();
      for (const hostname of hostnames) {
        const found = await findDomainFor(tx, hostname, { userId: ownerId, admin: true });
        if (found) ids.set(hostname, found.id);
        else if (create !== null) ids.set(hostname, (await claimDomain(tx, dialect, { hostname, ownerId, at: create.at })).id);
      }
      return ids;
    },

    /** Inserts the links, their tags and their import_links rows; returns the new ids by "domainId/code". */
    async insertLinks(tx: Tx, sourceKey: string, links: readonly NewImportLink[]): Promise<Map<string, number>> {
      const ids = new Map<string, number>();
      const idOf = (l: NewImportLink) => ids.get(`${l.row.domain_id}/${l.row.short_code}`)!;
      for (const part of chunks(links)) {
        const rows = await insertLinkRows(tx, part.map((l) => l.row));
        for (const r of rows) ids.set(`${r.domain_id}/${r.short_code}`, Number(r.id));
        // A code names its link by id (link_codes.link_id): the claimed codes now point at the new links.
        for (const [domainId, codes] of codesByDomain(rows.map((r) => ({ domainId: Number(r.domain_id), code: r.short_code })), (c) => c.domainId)) {
          await tx.updateTable('link_codes')
            .set((eb) => ({ link_id: eb.selectFrom('links').select('links.id').whereRef('links.short_code', '=', 'link_codes.code').where('links.domain_id', '=', domainId) }))
            .where('domain_id', '=', domainId).where('code', 'in', codes).execute();
        }
        await claimAliases(tx, part.flatMap((l) => aliasesOf(l.row).map((code) => ({ domain_id: l.row.domain_id, code, link_id: idOf(l) }))));
        const tags = part.flatMap((l) => (l.row.tags ? String(l.row.tags).split(',') : []).map((tag) => ({ link_id: idOf(l), tag })));
        for (const some of chunks(tags)) await insertTags(tx, some);
        await insertImportLinks(tx, part.map((l) => ({ source_key: sourceKey, source_domain: l.sourceDomain, source_code: l.sourceCode, link_id: idOf(l) })));
      }
      // One message for the batch: other instances (and, beside the CLI, the server) drop the misses they cache.
      if (links.length) await dialect.notify(tx, LINK_CHANGES_CHANNEL, changeMessage('*', CODES_ADDED));
      return ids;
    },
  };
}

/**
 * The import's own tables and the rows an import adds to links: plain multi-row statements inside the
 * caller's transaction, the same SQL on both engines. Each batch of created links is announced on the
 * link-change channel, on commit (every instance's cache, and beside the CLI the embedded server's, drops the
 * misses it holds), as a link created through the API is.
 */
export function createImportsRepository(deps: { db: Kysely<Database>; dialect: Dialect }) {
  return {
    ...createImportJobRecords(deps),
    alreadyImported,
    takenCodes,
    claimCodes,
    raiseClickCount,
    ...createImportedLinkWrites(deps),
  };
}

export type ImportedClickWriter = (tx: Tx, batch: readonly ClickEvent[]) => Promise<void>;

/** The owner of imported links: the named user, or the oldest active admin. */
export async function findImportOwner(db: Kysely<Database>, username: string | undefined): Promise<{ id: number; username: string } | undefined> {
  let q = db.selectFrom('users').select(['id', 'username']).where('status', '=', 'active');
  q = username !== undefined ? q.where('username_lower', '=', username.toLowerCase()) : q.where('role', '=', 'admin').orderBy('created_at').orderBy('id');
  const row = await q.limit(1).executeTakeFirst();
  return row ? { id: Number(row.id), username: row.username } : undefined;
}
