import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Storage } from './database.js';
import type { Dialect } from './dialect.js';

/**
 * The index behind the link lists' `q` (SPEC §13, §18, §20: a substring of the URL, the code, the title or an
 * alias, ignoring ASCII case), so that a search among a million links reads the few that match instead of all of
 * them (migration 039). Both engines index trigrams, which serve patterns of three characters or more; a shorter
 * `q` is answered by the scan it always was, and so is one whose every trigram more than RARE_TRIGRAM links hold.
 *
 * - SQLite: `link_search`, an FTS5 table with the trigram tokenizer (case folded), one row per link (rowid = the
 *   link's id) with its title, code, aliases and URL. Contentless (the text stays in `links` only) with
 *   contentless_delete, and kept by triggers on `links`, so every write path (the API's grouped insert, PATCH,
 *   delete, the expiry sweep, imports' batch inserts, bulk) updates it in its own transaction without knowing.
 *   detail=none (which documents hold a trigram, not where): a third of the size of detail=full (about 130 MB
 *   against 390 MB a million links); a search asks for the links holding all of the pattern's rare trigrams.
 *   It only narrows: the list still applies the LIKE of the scan to the candidates, so the answers are the
 *   scan's exactly (FTS5 folds more than ASCII case, and the trigrams may lie apart or in different columns).
 * - PostgreSQL: `pg_trgm`'s GIN indexes on the four columns, which serve the same `ilike` the scan ran (the
 *   planner rechecks every candidate), asked first for the matching ids (postgresCandidates). Creating the extension
 *   needs a privilege the database owner may lack: then the migration leaves it out, the search keeps scanning
 *   and the start-up says so once (warnWithoutSearchIndex).
 */

/** The columns searched, in `links`. */
const COLUMNS = ['title', 'short_code', 'aliases', 'original_url'] as const;

const searchRow = (row: 'new' | 'old') =>
  sql.raw(
    `insert into link_search (rowid, title, short_code, aliases, original_url) values (${row}.id, coalesce(${row}.title, ''), ${row}.short_code, ${row}.aliases, ${row}.original_url)`,
  );

/**
 * The SQLite index and its triggers, filled from the links there are. A migration that rebuilds `links`
 * (copy, drop, rename) drops the triggers with the old table: it must call this again.
 */
export async function createSqliteLinkSearch(db: Kysely<unknown>): Promise<void> {
  await sql`create virtual table if not exists link_search using fts5(title, short_code, aliases, original_url,
    content = '', contentless_delete = 1, tokenize = 'trigram', detail = none)`.execute(db);
  await sql`drop trigger if exists links_search_insert`.execute(db);
  await sql`drop trigger if exists links_search_update`.execute(db);
  await sql`drop trigger if exists links_search_delete`.execute(db);
  await sql`create trigger links_search_insert after insert on links begin ${searchRow('new')}; end`.execute(db);
  // Only a change of a searched column: the click writer's counter updates do not touch the index.
  await sql`create trigger links_search_update after update of title, short_code, aliases, original_url on links begin
    delete from link_search where rowid = old.id; ${searchRow('new')}; end`.execute(db);
  await sql`create trigger links_search_delete after delete on links begin delete from link_search where rowid = old.id; end`.execute(
    db,
  );
  await sql`delete from link_search`.execute(db);
  await sql`insert into link_search (rowid, title, short_code, aliases, original_url)
    select id, coalesce(title, ''), short_code, aliases, original_url from links`.execute(db);
}

const TRIGRAM_INDEX = (column: string) => `links_${column}_trgm`;

/**
 * `pg_trgm` and its four GIN indexes; false (nothing changed, the transaction usable) when the extension cannot
 * be created here. Under a savepoint: a refused CREATE EXTENSION would otherwise abort the migration's
 * transaction and with it the start.
 */
export async function createPostgresLinkSearch(db: Kysely<unknown>): Promise<boolean> {
  await sql`savepoint link_search_extension`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`release savepoint link_search_extension`.execute(db);
  } catch {
    await sql`rollback to savepoint link_search_extension`.execute(db);
    return false;
  }
  for (const column of COLUMNS) {
    await sql`create index if not exists ${sql.id(TRIGRAM_INDEX(column))} on links using gin (${sql.id(column)} gin_trgm_ops)`.execute(
      db,
    );
  }
  return true;
}

/**
 * On PostgreSQL without the trigram indexes (the extension could not be created when migration 039 ran), one
 * warning at start-up: every `q` search reads every link. Nothing on SQLite, whose index always exists.
 */
export async function warnWithoutSearchIndex(
  storage: Pick<Storage, 'db' | 'dialect'>,
  warn: (msg: string) => void,
): Promise<void> {
  if (storage.dialect.name !== 'postgres') return;
  const index = TRIGRAM_INDEX('original_url');
  const found = await sql<{ n: number }>`select count(*)::int as n from pg_indexes where indexname = ${index}`.execute(
    storage.db,
  );
  if (Number(found.rows[0]?.n ?? 0) > 0) return;
  warn(
    'link search without an index: the pg_trgm extension could not be created (CREATE EXTENSION needs a privilege this ' +
      'role lacks), so every `q` search of the link lists reads every link; see docs/operating.md, "Link search"',
  );
}

/** Patterns shorter than this (in characters) have no trigram to look up: the scan answers them. */
export const TRIGRAM = 3;
/** More trigrams narrow little more and cost a posting list each; any subset still finds every match. */
const MAX_TRIGRAMS = 16;

/** The distinct trigrams of `needle`, by code point as FTS5's tokenizer cuts them, at most MAX_TRIGRAMS spread over it. */
function trigramsOf(needle: string): string[] {
  const chars = [...needle];
  const all = new Set<string>();
  for (let i = 0; i + TRIGRAM <= chars.length; i += 1) all.add(chars.slice(i, i + TRIGRAM).join(''));
  const list = [...all];
  if (list.length <= MAX_TRIGRAMS) return list;
  return Array.from(
    { length: MAX_TRIGRAMS },
    (_, i) => list[Math.round((i * (list.length - 1)) / (MAX_TRIGRAMS - 1))]!,
  );
}

/**
 * A trigram more links than this hold narrows too little to pay (measured at a million links: an AND over
 * trigrams that every title holds read their whole posting lists, over 100 ms, where the rare ones alone take
 * under a millisecond). Each trigram is probed for one more than this (FTS5 streams a single term's links, so a
 * probe stops there); only the rare ones are asked for. When none is rare, the scan answers: it walks the list's
 * own order and meets a broad pattern's matches at once (a page-mode total counts them either way).
 */
export const RARE_TRIGRAM = 5_000;

/** An FTS5 string of exactly one token: everything literal but the double quote, doubled. */
const ftsString = (gram: string) => `"${gram.replace(/"/g, '""')}"`;

/**
 * On PostgreSQL, the links `matches` (the list's ilikes) selects, found first and on their own (OFFSET 0 keeps
 * the planner from merging the subquery into the list): left to itself with the list's `order by id limit 21`,
 * it estimated a few hundred matches for any pattern, walked the primary key in order testing each link and,
 * for a pattern one link matched, read all million (5 s) where the trigram indexes answer in milliseconds. The
 * price: a pattern most links match is collected whole before the page is cut (about 2 s at a million links).
 * Null for a needle shorter than a trigram, which no index serves.
 */
function postgresCandidates(needle: string, matches: RawBuilder<SqlBool>): RawBuilder<SqlBool> | null {
  if ([...needle].length < TRIGRAM) return null;
  return sql<SqlBool>`links.id in (select links.id from links where ${matches} offset 0)`;
}

/**
 * The links whose searched text may contain `needle`, as a condition on `links.id`. On SQLite a superset the
 * caller's LIKE (`matches`) narrows: those holding every rare trigram of it; on PostgreSQL postgresCandidates.
 * Null where no index narrows: a needle shorter than a trigram, or on SQLite one whose trigrams are all common.
 */
export async function searchCandidates(
  db: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  dialect: Pick<Dialect, 'name'>,
  needle: string,
  matches: RawBuilder<SqlBool>,
): Promise<RawBuilder<SqlBool> | null> {
  if (dialect.name === 'postgres') return postgresCandidates(needle, matches);
  const rare: string[] = [];
  for (const gram of trigramsOf(needle)) {
    const probe = await sql<{
      n: number;
    }>`select count(*) as n from (select rowid from link_search where link_search match ${ftsString(gram)} limit ${RARE_TRIGRAM + 1})`.execute(
      db,
    );
    if (Number(probe.rows[0]?.n ?? 0) <= RARE_TRIGRAM) rare.push(ftsString(gram));
  }
  if (rare.length === 0) return null;
  return sql<SqlBool>`links.id in (select rowid from link_search where link_search match ${rare.join(' AND ')})`;
}
