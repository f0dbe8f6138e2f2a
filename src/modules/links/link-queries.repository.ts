import { sql, type CompiledQuery, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { FastStatement, FastStatements, Storage } from '../../db/database.js';
import type { Database, LinkRow } from '../../db/types.js';
import { searchCandidates } from '../../db/link-search.js';
import { countSearchText } from '../../db/link-search-text.js';
import type { SqliteScans } from '../../db/sqlite-scans.js';
import { countedLinks, isCommonTag, listDomains, tagCondition } from './link-list-plans.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';
import type { NamedLink } from './link-aliases.js';
import type { Db } from './link-rows.js';
import type { LinkStatus } from './links.schemas.js';

export interface LinkListFilter {
  tag?: string | undefined;
  q?: string | undefined;
  /** only the links of this domain (0: the default domain) */
  domainId?: number | undefined;
  /** only the links of these domains (an API key limited to them) */
  domainIds?: readonly number[] | undefined;
  /** SPEC §24: only the links whose health has this status */
  health?: 'ok' | 'broken' | 'unknown' | undefined;
}

/** The admin list's filters (SPEC §18): a user's links, links in one state. */
export interface AllLinksFilter extends LinkListFilter {
  userId?: number | undefined;
  status?: LinkStatus | undefined;
}

type LinksQuery = SelectQueryBuilder<Database, 'links', object>;

/** The columns `q` searches (see `filtered`), the URL first: a broad pattern most often matches there. */
const searchedColumns = (text: string) =>
  text.includes(',')
    ? ['links.original_url', 'links.short_code', 'links.title']
    : ['links.original_url', 'links.short_code', 'links.title', 'links.aliases'];

/** The test of `q` the search index serves (db/link-search.ts asks it for candidates). */
function textMatches(text: string, dialect: Pick<Storage['dialect'], 'containsIgnoringCase'>): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${sql.join(
    searchedColumns(text).map((column) => dialect.containsIgnoringCase(column, text)),
    sql` or `,
  )})`;
}

/**
 * `tag` must be one of the link's, `q` a substring of the URL, the code, the title or an alias (any case; SPEC
 * §20: an imported link is looked up by its old slug). Aliases are read from the row's comma-separated list;
 * no alias holds a comma, so a `q` with one would only match across two of them and skips that column. On
 * SQLite the search index (db/link-search.ts) first narrows `q` to the links that may match, then the same LIKEs
 * decide, so the answers stay the scan's; on PostgreSQL the ilikes are asked first on their own (trigram indexes).
 */
function filtered(
  base: LinksQuery,
  filter: LinkListFilter,
  dialect: Pick<Storage['dialect'], 'anyContainsIgnoringCase' | 'name'>,
  candidates: RawBuilder<SqlBool> | null,
  /** more than RARE_TAG links carry filter.tag (link-list-plans.ts) */
  commonTag = false,
): LinksQuery {
  let q = base;
  if (filter.domainId !== undefined) q = q.where('domain_id', '=', filter.domainId);
  // broken and unknown links are few among healthy ones: links_health_idx (migration 048) holds only them
  if (filter.health !== undefined) q = q.where('health_status', '=', filter.health);
  if (filter.domainIds !== undefined)
    q = filter.domainIds.length ? q.where('domain_id', 'in', [...filter.domainIds]) : q.where(sql<boolean>`1 = 0`);
  if (filter.tag !== undefined)
    q = q.where(tagCondition(filter.tag, commonTag, candidates !== null && dialect.name === 'sqlite'));
  if (filter.q !== undefined) {
    const text = filter.q;
    if (candidates) q = q.where(() => candidates);
    // The same answers as textMatches, tested on each row read: the scan's or the candidates'.
    q = q.where(() => dialect.anyContainsIgnoringCase(searchedColumns(text), text));
  }
  return q;
}

const countOf = (query: LinksQuery) => query.select((eb) => eb.fn.countAll<number>().as('n'));

/** Fewer links than this are counted in one part: a scan of them takes a few milliseconds. */
const SPLIT_COUNT_FROM = 10_000;

/**
 * The matches of `base` counted on the scan threads, cut by id into one part a thread and read side by side: a
 * search no index narrows counts every link for its page-mode total (a million links: about 170 ms in one part,
 * most of it reading the rows). Each part is a read of its own, as the page beside the count is.
 */
async function countOnScans(db: Kysely<Database>, scans: SqliteScans, base: LinksQuery): Promise<number> {
  const { top } = await db
    .selectFrom('links')
    .select((eb) => eb.fn.max('id').as('top'))
    .executeTakeFirstOrThrow();
  const parts = Number(top ?? 0) < SPLIT_COUNT_FROM ? 1 : scans.width;
  const bounds = Array.from({ length: parts - 1 }, (_, k) => Math.floor((Number(top) * (k + 1)) / parts));
  const counts = await Promise.all(
    Array.from({ length: parts }, (_, k) => {
      let part = base;
      if (k > 0) part = part.where('links.id', '>', bounds[k - 1]!);
      if (k < parts - 1) part = part.where('links.id', '<=', bounds[k]!);
      return scans.all(countOf(part).compile());
    }),
  );
  return counts.reduce((sum, rows) => sum + Number(rows[0]!.n), 0);
}

type QueryDeps = {
  db: Kysely<Database>;
  dialect: Pick<Storage['dialect'], 'containsIgnoringCase' | 'anyContainsIgnoringCase' | 'name'>;
  fast: FastStatements | null;
  paginator: Paginator;
  /** SQLite: where reads that visit every link run (null: on the connection, PostgreSQL's being asynchronous) */
  scans: SqliteScans | null;
};

/** What a walk over every link reads of each: its names, its destinations, whether it is disabled, its version. */
export type ScannedLink = NamedLink & Pick<LinkRow, 'original_url' | 'disabled_at' | 'fallback_url' | 'version'>;

/** Single links and walks over them: by code, past their expiry, in id order. */
function createLinkLookups({ db, fast }: Pick<QueryDeps, 'db' | 'fast'>) {
  const findStatement: FastStatement<[number, string], LinkRow> | null =
    fast?.prepare<[number, string], LinkRow>('select * from links where domain_id = ? and short_code = ?') ?? null;
  return {
    async findByCode(code: string, domainId = 0, tx: Db = db): Promise<LinkRow | undefined> {
      // Prepared on the embedded engine (every stats and link read starts here).
      if (tx === db && findStatement && fast!.usable()) return findStatement.get(domainId, code);
      return tx
        .selectFrom('links')
        .selectAll()
        .where('domain_id', '=', domainId)
        .where('short_code', '=', code)
        .executeTakeFirst();
    },

    async findExpired(now: number, limit: number): Promise<NamedLink[]> {
      return db
        .selectFrom('links')
        .select(['id', 'short_code', 'domain_id', 'aliases'])
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(limit)
        .execute();
    },

    /** Links in id order after `afterId` (disable-blocked walks every link in batches). */
    async scan(afterId: number, limit: number): Promise<ScannedLink[]> {
      return db
        .selectFrom('links')
        .select(['id', 'short_code', 'domain_id', 'aliases', 'original_url', 'disabled_at', 'fallback_url', 'version'])
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
    },
  };
}

/** The lists of links, a user's and the admin's, filtered (see `filtered`) and paginated. */
/**
 * `base`'s rows in the list's order. Sorted by clicks on PostgreSQL, the order is read from link_click_order
 * (migration 056: the counters of `links` are not indexed there), narrowed to `owner`'s rows when there is one.
 */
function ordered(
  { dialect, paginator }: Pick<QueryDeps, 'dialect' | 'paginator'>,
  base: LinksQuery,
  list: ResolvedList,
  owner: number | undefined,
) {
  if (dialect.name !== 'postgres' || list.sortColumn !== 'click_count')
    return paginator.apply(base.selectAll('links'), list, 'links');
  let joined = base.innerJoin('link_click_order as o', 'o.link_id', 'links.id');
  if (owner !== undefined) joined = joined.where('o.owner_id', '=', owner);
  return paginator.apply(joined.selectAll('links'), list, 'links', { sort: 'o.clicks', id: 'o.link_id' });
}

/** Who a list's total counts: an owner's links or everyone's (null); with `liveAt`, only those not expired then. */
type CountScope = { owner: number | null; liveAt: number | null };

/**
 * `base` filtered: the search's candidates and the tag's plan found first. `scan`: a search that no index narrows
 * (SQLite), whose page and total run on the scan thread (db/sqlite-scans.ts), off the event loop. `wideCount`: on
 * PostgreSQL, such a search's total counted in link_search_text (null: the list counts its own rows, as it does
 * for a tag or a health, which that table does not hold).
 */
async function narrowed(
  { db, dialect, scans }: Pick<QueryDeps, 'db' | 'dialect' | 'scans'>,
  base: LinksQuery,
  filter: LinkListFilter,
) {
  const { q, tag, health } = filter;
  const commonTag = tag !== undefined && (await isCommonTag(db, dialect, tag));
  // A two-character search lists the index's trigrams on the scan thread (link-search.ts, shortCandidates).
  const readTerms = scans ? <R>(query: CompiledQuery<R>) => scans.all(query) : undefined;
  const candidates =
    q === undefined ? null : await searchCandidates(db, dialect, q, textMatches(q, dialect), readTerms);
  const wide = q !== undefined && candidates === null;
  const wideCount = async (scope: CountScope) =>
    dialect.name === 'postgres' && wide && tag === undefined && health === undefined
      ? countSearchText(db, q, { ...scope, domains: listDomains(filter) })
      : null;
  return { query: filtered(base, filter, dialect, candidates, commonTag), scan: scans !== null && wide, wideCount };
}

function createLinkLists({ db, dialect, paginator, scans }: Pick<QueryDeps, 'db' | 'dialect' | 'paginator' | 'scans'>) {
  /** One page of `base` in the list's order; the total too in page mode (`counted`: known without counting). */
  async function onePage(
    { query: base, scan }: { query: LinksQuery; scan: boolean },
    list: ResolvedList,
    owner: number | undefined,
    counted: () => Promise<number | null> = async () => null,
  ): Promise<{ rows: LinkRow[]; total: number | null }> {
    const page = ordered({ dialect, paginator }, base, list, owner);
    const read = async () => (scan ? await scans!.all(page.compile()) : await page.execute());
    if (list.mode !== 'page') return { rows: await read(), total: null };
    const total =
      (await counted()) ??
      (scan ? await countOnScans(db, scans!, base) : Number((await countOf(base).executeTakeFirstOrThrow()).n));
    // Counted first: a page past the matches (none at all, for a search that finds nothing) is not read, which
    // for a search that reads every link (the short patterns) would read them all a second time.
    return { rows: total > (list.page - 1) * list.limit ? await read() : [], total };
  }

  return {
    /** A user's live links (expired ones are gone from the API); see `filtered` for tag and q. */
    async listByUser(
      userId: number,
      now: number,
      list: ResolvedList,
      filter: LinkListFilter,
    ): Promise<{ rows: LinkRow[]; total: number | null }> {
      const base = db
        .selectFrom('links')
        .where('user_id', '=', userId)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      const found = await narrowed({ db, dialect, scans }, base, filter);
      const counted = async () =>
        (await countedLinks(db, userId, now, filter)) ?? (await found.wideCount({ owner: userId, liveAt: now }));
      return onePage(found, list, userId, counted);
    },

    /** Every link, for admins: expired ones until the sweep removes them, disabled ones, anonymous ones. */
    async listAll(
      now: number,
      list: ResolvedList,
      filter: AllLinksFilter,
    ): Promise<{ rows: LinkRow[]; total: number | null }> {
      const { query, scan, wideCount } = await narrowed({ db, dialect, scans }, db.selectFrom('links'), filter);
      let base = query;
      if (filter.userId !== undefined) base = base.where('user_id', '=', filter.userId);
      if (filter.status === 'disabled') base = base.where('disabled_at', 'is not', null);
      if (filter.status === 'expired') base = base.where('expires_at', '<=', now);
      if (filter.status === 'active') {
        base = base
          .where('disabled_at', 'is', null)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      }
      // Links whatever their state, a user's or everyone's: what the owners' counters count (see countedLinks).
      const counted = async () =>
        filter.status === undefined
          ? ((await countedLinks(db, filter.userId ?? 'all', null, filter)) ??
            (await wideCount({ owner: filter.userId ?? null, liveAt: null })))
          : null;
      return onePage({ query: base, scan }, list, filter.userId, counted);
    },
  };
}

/** Reads of links as the API and the admin tools see them. */
export function createLinkQueries(deps: QueryDeps) {
  return { ...createLinkLookups(deps), ...createLinkLists(deps) };
}
