import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database, LinkRow, NewLinkRow } from '../../db/types.js';
import { compiledInsert } from '../../db/compiled-inserts.js';
import { recordEvent } from '../../db/outbox.js';
import { recordPublicEvents } from '../../db/events.js';
import { linkEventInput, type PublicLinkOf } from './link-rows.js';
import { claimNames } from './link-aliases.js';

type Tx = Transaction<Database>;

/** Rows per multi-row statement: well below both engines' limits on bound parameters. */
const CHUNK = 400;
export const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

const LINK_COLUMNS = [
  'short_code',
  'domain_id',
  'user_id',
  'original_url',
  'expires_at',
  'created_at',
  'updated_at',
  'max_visits',
  'forward_query',
  'password_hash',
  'tags',
  'title',
  'aliases',
  'rules',
  'click_count',
] as const;
/** Exactly the columns the statement writes (a property beyond them would not be written). */
export type BatchLinkRow = Pick<NewLinkRow, (typeof LINK_COLUMNS)[number]> & { short_code: string; domain_id: number };
const insertLinkRows = compiledInsert(LINK_COLUMNS, (db: Kysely<Database>, rows: BatchLinkRow[]) =>
  db.insertInto('links').values(rows).returningAll(),
);

const insertTags = compiledInsert(
  ['link_id', 'tag'] as const,
  (db: Kysely<Database>, rows: Array<{ link_id: number; tag: string }>) => db.insertInto('link_tags').values(rows),
);

/** A code on a domain (0: the default domain). */
export interface DomainCode {
  domainId: number;
  code: string;
}

/** The codes grouped by their domain. */
const codesByDomain = <T extends { code: string }, D>(
  items: Iterable<T>,
  domainOf: (item: T) => D,
): Map<D, string[]> => {
  const out = new Map<D, string[]>();
  for (const item of items) {
    const domain = domainOf(item);
    (out.get(domain) ?? out.set(domain, []).get(domain)!).push(item.code);
  }
  return out;
};

const aliasesOf = (row: BatchLinkRow): string[] => (row.aliases ? String(row.aliases).split(',') : []);

/** One chunk of links: their rows, their claimed codes pointed at them, their aliases and tags; ids into `ids`. */
async function insertLinkPart(
  tx: Tx,
  part: readonly BatchLinkRow[],
  ids: Map<string, number>,
  created: LinkRow[],
): Promise<void> {
  const idOf = (r: BatchLinkRow) => ids.get(`${r.domain_id}/${r.short_code}`)!;
  for (const r of (await insertLinkRows(tx, part)) as LinkRow[]) {
    ids.set(`${r.domain_id}/${r.short_code}`, Number(r.id));
    created.push(r);
  }
  // A code names its link by id (link_codes.link_id): the claimed codes now point at the new links.
  for (const [domainId, codes] of codesByDomain(
    part.map((r) => ({ domainId: r.domain_id, code: r.short_code })),
    (c) => c.domainId,
  )) {
    await tx
      .updateTable('link_codes')
      .set((eb) => ({
        link_id: eb
          .selectFrom('links')
          .select('links.id')
          .whereRef('links.short_code', '=', 'link_codes.code')
          .where('links.domain_id', '=', domainId),
      }))
      .where('domain_id', '=', domainId)
      .where('code', 'in', codes)
      .execute();
  }
  // The aliases were found free in this transaction; one taken since (a link created meanwhile) fails the batch.
  for (const some of chunks(
    part.flatMap((r) => aliasesOf(r).map((code) => ({ domain_id: r.domain_id, code, link_id: idOf(r) }))),
  )) {
    const claimed = await claimNames(tx, some);
    if (claimed.length !== some.length)
      throw new Error('an alias was taken while the import ran; run it again to go on');
  }
  const tags = part.flatMap((r) => (r.tags ? String(r.tags).split(',') : []).map((tag) => ({ link_id: idOf(r), tag })));
  for (const some of chunks(tags)) await insertTags(tx, some);
}

/** An imported link's click count: raised to the source's count, or added to. */
function importedClickCounts() {
  return {
    /** Raises a link's click count to what a source counted beyond the records it gave (YOURLS without its log). */
    async raiseClickCount(tx: Tx, linkId: number, count: number): Promise<void> {
      await tx
        .updateTable('links')
        .set({ click_count: sql`case when click_count < ${count} then ${count} else click_count end` })
        .where('id', '=', linkId)
        .execute();
    },

    /** Adds to a link's click count the visits a source only counts (a re-run of Kutt: the count's growth). */
    async addClicks(tx: Tx, linkId: number, count: number): Promise<void> {
      await tx
        .updateTable('links')
        .set((eb) => ({ click_count: eb('click_count', '+', count) }))
        .where('id', '=', linkId)
        .execute();
    },
  };
}

/**
 * Links written many at a time (the importers', SPEC §20): plain multi-row statements inside the caller's
 * transaction, the same SQL on both engines, announced in the outbox (db/outbox.ts) in the same transaction as a
 * link created through the API is (every instance's cache, and beside the CLI the embedded server's, drops the
 * misses it holds).
 */
export function createLinkBatchRepository(deps: { dialect: Pick<Dialect, 'notify'>; publicLink: PublicLinkOf }) {
  const { dialect, publicLink } = deps;
  return {
    ...importedClickCounts(),

    /** Which of these codes are issued already on their domains (live or tombstoned): "domainId/code" keys. */
    async takenCodes(tx: Kysely<Database>, codes: readonly DomainCode[]): Promise<Set<string>> {
      const taken = new Set<string>();
      for (const [domainId, ofDomain] of codesByDomain(codes, (c) => c.domainId)) {
        for (const part of chunks(ofDomain)) {
          const rows = await tx
            .selectFrom('link_codes')
            .select('code')
            .where('domain_id', '=', domainId)
            .where('code', 'in', part)
            .execute();
          for (const r of rows) taken.add(`${domainId}/${r.code}`);
        }
      }
      return taken;
    },

    /** Claims the codes of a domain that are free; returns those it claimed. */
    async claimCodes(tx: Tx, domainId: number, codes: readonly string[]): Promise<Set<string>> {
      const claimed = new Set<string>();
      for (const part of chunks(codes)) {
        for (const r of await claimNames(
          tx,
          part.map((code) => ({ domain_id: domainId, code, link_id: null })),
        ))
          claimed.add(r.code);
      }
      return claimed;
    },

    /** Inserts links whose codes are claimed, their aliases and tags; the new ids by "domainId/code". */
    async insertLinks(tx: Tx, rows: readonly BatchLinkRow[]): Promise<Map<string, number>> {
      const ids = new Map<string, number>();
      const created: LinkRow[] = [];
      for (const part of chunks(rows)) await insertLinkPart(tx, part, ids, created);
      // One event for the batch: every instance (and, beside the CLI, the server) drops the misses it caches.
      const domainIds = [...new Set(rows.map((r) => r.domain_id))];
      const imported = { type: 'links.imported', data: { count: rows.length, domain_ids: domainIds } } as const;
      if (rows.length) await recordEvent(tx, dialect, imported);
      // One public event per link (SPEC §22), written many rows a statement in the same transaction.
      await recordPublicEvents(
        tx,
        dialect,
        created.map((row) => linkEventInput('link.created', row, publicLink)),
      );
      return ids;
    },
  };
}

export type LinkBatchRepository = ReturnType<typeof createLinkBatchRepository>;
