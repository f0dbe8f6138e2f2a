import { sql, type CompiledQuery, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Storage } from './database.js';
import type { Dialect } from './dialect.js';

/**
 * The index behind the link lists' `q` (SPEC §13, §18, §20: a substring of the URL, the code, the title or an
 * alias, ignoring ASCII case), so that a search among a million links reads the few that match instead of all of
 * them (migration 039). Both engines index trigrams, which serve patterns of three characters or more, and look up
 * two characters each its own way (below); one character is answered by the scan it always was, and so is a
 * pattern too many links match to narrow (SQLite: RARE_TRIGRAM, NARROW_AND, SHORT_SHARE; PostgreSQL: BROAD_SHARE).
 *
 * - SQLite: `link_search`, an FTS5 table with the trigram tokenizer (case folded), one row per link (rowid = the
 *   link's id) with its title, code, aliases and URL, each followed by char(1) (migration 055), so that every
 *   occurrence of two characters begins a trigram, the last two of a column too: a two-character `q` is looked up
 *   among the trigrams it begins (shortCandidates, through `link_search_terms`, the index's list of its
 *   trigrams). Contentless (the text stays in `links` only) with
 *   contentless_delete, and kept by triggers on `links`, so every write path (the API's grouped insert, PATCH,
 *   delete, the expiry sweep, imports' batch inserts, bulk) updates it in its own transaction without knowing.
 *   detail=none (which documents hold a trigram, not where): a third of the size of detail=full (about 130 MB
 *   against 390 MB a million links); a search asks for the links holding all of the pattern's rare trigrams.
 *   It only narrows: the list still applies the LIKE of the scan to the candidates, so the answers are the
 *   scan's exactly (FTS5 folds more than ASCII case, and the trigrams may lie apart or in different columns).
 * - PostgreSQL: `pg_trgm`'s GIN indexes on the four columns, which serve the same `ilike` the scan ran (the
 *   planner rechecks every candidate), asked first for the matching ids (postgresCandidates); a two-character `q`
 *   is looked up in a GIN index of each link's pairs of characters (migration 057). Creating the extension
 *   needs a privilege the database owner may lack: then the migration leaves it out, the search keeps scanning
 *   and the start-up says so once (warnWithoutSearchIndex).
 */

/** The columns searched, in `links`. */
const COLUMNS = ['title', 'short_code', 'aliases', 'original_url'] as const;

/**
 * Each column's text in the index, followed by char(1), so that the two characters ending a column begin a
 * trigram as well (any character would do: the index only narrows, the list's LIKE decides).
 */
const searchColumns = (row: 'new' | 'links') =>
  `${row}.id, coalesce(${row}.title, '') || char(1), ${row}.short_code || char(1), ${row}.aliases || char(1), ` +
  `${row}.original_url || char(1)`;
const searchRow = sql.raw(
  `insert into link_search (rowid, title, short_code, aliases, original_url) values (${searchColumns('new')})`,
);

/**
 * The SQLite index, its list of trigrams and its triggers, built anew from the links there are. A migration that
 * rebuilds `links` (copy, drop, rename) drops the triggers with the old table: it must call this again.
 */
export async function createSqliteLinkSearch(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists link_search_terms`.execute(db);
  await sql`drop table if exists link_search`.execute(db);
  await sql`create virtual table link_search using fts5(title, short_code, aliases, original_url,
    content = '', contentless_delete = 1, tokenize = 'trigram', detail = none)`.execute(db);
  // One row per trigram with the number of links holding it, read in a range of trigrams (shortCandidates).
  await sql`create virtual table link_search_terms using fts5vocab(link_search, row)`.execute(db);
  await sql`drop trigger if exists links_search_insert`.execute(db);
  await sql`drop trigger if exists links_search_update`.execute(db);
  await sql`drop trigger if exists links_search_delete`.execute(db);
  await sql`create trigger links_search_insert after insert on links begin ${searchRow}; end`.execute(db);
  // Only a change of a searched column: the click writer's counter updates do not touch the index.
  await sql`create trigger links_search_update after update of title, short_code, aliases, original_url on links begin
    delete from link_search where rowid = old.id; ${searchRow}; end`.execute(db);
  await sql`create trigger links_search_delete after delete on links begin delete from link_search where rowid = old.id; end`.execute(
    db,
  );
  await sql`insert into link_search (rowid, title, short_code, aliases, original_url)
    select ${sql.raw(searchColumns('links'))} from links`.execute(db);
}

const TRIGRAM_INDEX = (column: string) => `links_${column}_trgm`;

/**
 * PostgreSQL, a link's searched text for its pairs of characters: the four columns, each followed by char(1) as in
 * SQLite's index (any character would do: the pairs only narrow, the list's ilike decides). Unqualified, as in the
 * index's expression, which a query must repeat to use it.
 */
const PAIRS_TEXT = sql.raw(
  `link_search_pairs(coalesce(title, '') || chr(1) || short_code || chr(1) || aliases || chr(1) || original_url || chr(1))`,
);

/**
 * PostgreSQL (migration 057): `link_search_pairs(text)`, the pairs of adjacent characters of a text
 * lower-cased (`ilike` compares the lower-cased text with the lower-cased pattern, so a text matching a pattern of
 * two characters holds its pair), and the GIN index of each link's pairs, which serves a `q` of two characters
 * (postgresCandidates). Lower-cased in the database's collation, as `ilike` lowers the title, the aliases and the
 * URL: the text joins `short_code`, whose collation is "C" (it would fold ASCII only, and "É" would stay), and
 * whose characters are ASCII. Plain SQL and the built-in array operators: no extension.
 */
export async function createPostgresLinkPairs(db: Kysely<unknown>): Promise<void> {
  // The pairs at even offsets and at odd ones: two regular-expression scans of the text lowered once, about a
  // fifth of the time of a substr() per offset (10 against 56 µs a link). A pair may come twice: the index keeps
  // each key once a row.
  await sql`create or replace function link_search_pairs(t text) returns text[]
    language sql immutable strict parallel safe
    as $$ select array(select m[1] from (select lower(t collate "default") as l) s,
      lateral (select regexp_matches(l, '..', 'g') union all select regexp_matches(substr(l, 2), '..', 'g')) r(m)) $$`.execute(
    db,
  );
  await sql`create index if not exists links_search_pairs_idx on links using gin (${PAIRS_TEXT})`.execute(db);
}

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
/** Two characters: SQLite looks them up among the trigrams they begin, PostgreSQL among the links' pairs. */
const PAIR = 2;
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
 * probe stops there); only the rare ones are asked for. When none is rare, all of them together (NARROW_AND), and
 * when those are many too, the scan answers: it walks the list's own order and meets a broad pattern's matches at
 * once (a page-mode total counts them either way).
 */
export const RARE_TRIGRAM = 5_000;

/**
 * When no trigram of a pattern is rare, their AND still narrows it when at most this many links hold them all:
 * the candidates the list's LIKE then reads cost less than the scan of every link (seconds at ten million).
 */
export const NARROW_AND = 20_000;

/** An FTS5 string of exactly one token: everything literal but the double quote, doubled. */
const ftsString = (gram: string) => `"${gram.replace(/"/g, '""')}"`;

/**
 * PostgreSQL counts a pattern as broad when its planner expects more than this share of the links to match (and
 * more than RARE_TRIGRAM): the statistics' histogram of each column (100 values) is matched against the pattern,
 * so a share this large means five or more sampled values matched; a rarer pattern is never taken for a broad one.
 */
const BROAD_SHARE = 0.05;

/**
 * On PostgreSQL, the links `matches` (the list's ilikes) selects, found first and on their own, as an array of
 * ids the list then reads by its primary key. Left to itself with the list's `order by id limit 21`, the planner
 * estimated a few hundred matches for any pattern, walked the primary key in order testing each link and, for a
 * pattern one link matched, read all million (5 s) where the trigram indexes answer in milliseconds; given the
 * ids as `id in (subquery)`, it joined them with a scan of every link testing the ilikes whenever it expected
 * some thousands of matches (0.8 s for 16,000 at a million links, against 41 ms by their ids). A
 * pattern the planner expects most links to match (BROAD_SHARE, read from its estimate of the condition alone,
 * which applies the pattern to the columns' statistics) is left to the list instead: its page meets the
 * matches at once in the list's order, and its total is one (parallel) scan, where collecting a million ids
 * first took 2.6 s. Two characters, which have no trigram, are found among the links' pairs of characters
 * (migration 057, createPostgresLinkPairs), and the ilikes decide. Null for a broad pattern, and for one character.
 */
async function postgresCandidates(
  db: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  needle: string,
  matches: RawBuilder<SqlBool>,
): Promise<RawBuilder<SqlBool> | null> {
  const length = [...needle].length;
  if (length < PAIR) return null;
  const plan = await sql<{
    'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }>;
  }>`explain (format json) select 1 from links where ${matches}`.execute(db);
  const expected = Number(plan.rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
  const all = await sql<{ n: number }>`select reltuples as n from pg_class where oid = 'links'::regclass`.execute(db);
  const links = Number(all.rows[0]?.n ?? 0);
  if (expected > RARE_TRIGRAM && expected > BROAD_SHARE * links) return null;
  const found = length < TRIGRAM ? sql`${PAIRS_TEXT} @> link_search_pairs(${needle}::text)` : matches;
  return sql<SqlBool>`links.id = any(array(select links.id from links where ${found}))`;
}

/** A trigram of the index and the number of links holding it (a row of `link_search_terms`). */
interface Term {
  term: string;
  doc: number;
}

/** Where the list of trigrams is read: a reader off the event loop (the scan thread), or else the connection. */
export type TermReader = (query: CompiledQuery<Term>) => Promise<Term[]>;

/**
 * Two characters are looked up while the links holding them are at most this share of all (or RARE_TRIGRAM): a
 * candidate costs about 0.8 µs (counted, then paged), a link scanned 0.1–0.35, so the index wins up to about a
 * third of the links (docs/performance.md); a fifth leaves a margin for the candidates' cursor page.
 */
export const SHORT_SHARE = 0.2;

/**
 * SQLite, a needle of two ASCII characters: the links holding any trigram it begins (every occurrence begins one:
 * link_search ends each column with char(1)). The index's own list of trigrams (fts5vocab) is read in the range
 * of the needle, case folded as the tokenizer folds; it counts each trigram's links as it goes, which for a
 * trigram most links hold takes a while (about 25 ms a million links), hence the reader. No trigram: no link
 * matches. More than SHORT_SHARE of the links (their highest id: more only after deletions): null, the scan.
 * Other needles of two characters (non-ASCII, whose case the tokenizer may fold otherwise than JavaScript): null.
 */
async function shortCandidates(
  db: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  needle: string,
  read: TermReader | undefined,
): Promise<RawBuilder<SqlBool> | null> {
  // eslint-disable-next-line no-control-regex
  if (needle.length !== 2 || !/^[\x00-\x7f]{2}$/.test(needle)) return null;
  const folded = needle.toLowerCase();
  const query = sql<Term>`select term, doc from link_search_terms where term >= ${folded} and term <= ${`${folded}\u{10ffff}`}`;
  const terms = read ? await read(query.compile(db)) : (await query.execute(db)).rows;
  const holding = terms.reduce((sum, t) => sum + Number(t.doc), 0);
  const links = async () => Number((await sql<{ n: number }>`select max(id) as n from links`.execute(db)).rows[0]?.n);
  if (holding > RARE_TRIGRAM && holding > SHORT_SHARE * (await links())) return null;
  if (terms.length === 0) return sql<SqlBool>`0`;
  const any = terms.map((t) => ftsString(t.term)).join(' OR ');
  return sql<SqlBool>`links.id in (select rowid from link_search where link_search match ${any})`;
}

/**
 * The links whose searched text may contain `needle`, as a condition on `links.id`. On SQLite a superset the
 * caller's LIKE (`matches`) narrows: those holding every rare trigram of it, or all its trigrams when none is rare
 * and few links hold all of them, or for two characters any trigram they begin (shortCandidates, its terms read by
 * `read`); on PostgreSQL postgresCandidates. Null where no index narrows: a needle shorter than a trigram (on
 * SQLite: than two characters), one whose trigrams more than NARROW_AND links hold together (SQLite), or one the
 * planner expects most links to match (PostgreSQL).
 */
export async function searchCandidates(
  db: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  dialect: Pick<Dialect, 'name'>,
  needle: string,
  matches: RawBuilder<SqlBool>,
  read?: TermReader,
): Promise<RawBuilder<SqlBool> | null> {
  if (dialect.name === 'postgres') return postgresCandidates(db, needle, matches);
  if ([...needle].length < TRIGRAM) return shortCandidates(db, needle, read);
  const rare: string[] = [];
  for (const gram of trigramsOf(needle)) {
    const probe = await sql<{ n: number }>`select count(*) as n
      from (select rowid from link_search where link_search match ${ftsString(gram)} limit ${RARE_TRIGRAM + 1})`.execute(
      db,
    );
    if (Number(probe.rows[0]?.n ?? 0) <= RARE_TRIGRAM) rare.push(ftsString(gram));
  }
  if (rare.length > 0) return candidatesOf(rare.join(' AND '));
  // None is rare, but together they may be: at ten million links a title word, a code or a URL's number has
  // every trigram in tens of thousands of links and few links with all of them. FTS5 steps through an AND by
  // seeking each list to the next common link: a narrow AND is read in milliseconds (a code among ten million links,
  // 15 ms with its page; bench:scale), a broad one stops at the limit.
  const all = trigramsOf(needle).map(ftsString).join(' AND ');
  const probe = await sql<{ n: number }>`select count(*) as n
    from (select rowid from link_search where link_search match ${all} limit ${NARROW_AND + 1})`.execute(db);
  return Number(probe.rows[0]?.n ?? 0) <= NARROW_AND ? candidatesOf(all) : null;
}

const candidatesOf = (match: string) =>
  sql<SqlBool>`links.id in (select rowid from link_search where link_search match ${match})`;
