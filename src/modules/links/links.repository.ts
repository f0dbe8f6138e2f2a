import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool, type Transaction } from 'kysely';
import { fastStatements, type FastStatement, type FastStatements, type Storage } from '../../db/database.js';
import type { Database, LinkRow, NewLinkRow } from '../../db/types.js';
import { searchCandidates } from '../../db/link-search.js';
import { recordEvent, type LinkField, type OutboxEvent } from '../../db/outbox.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';
import { groupedInsert, type NewCodedLink } from './link-insert.sqlite.js';
import type { LinkStatus } from './links.schemas.js';
import { aliasesOf, claimAliases, namesOf, replaceAliases, type NamedLink } from './link-aliases.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The fields a PATCH may change (the service has validated them). */
export type LinkChanges = Partial<
  Pick<
    LinkRow,
    | 'original_url'
    | 'expires_at'
    | 'max_visits'
    | 'forward_query'
    | 'password_hash'
    | 'tags'
    | 'title'
    | 'aliases'
    | 'disabled_at'
    | 'disabled_reason'
    | 'domain_id'
  >
>;

export interface LinkListFilter {
  tag?: string | undefined;
  q?: string | undefined;
  /** only the links of this domain (0: the default domain) */
  domainId?: number | undefined;
  /** only the links of these domains (an API key limited to them) */
  domainIds?: readonly number[] | undefined;
}

/** The admin list's filters (SPEC §18): a user's links, links in one state. */
export interface AllLinksFilter extends LinkListFilter {
  userId?: number | undefined;
  status?: LinkStatus | undefined;
}

type LinksQuery = SelectQueryBuilder<Database, 'links', object>;

export type LinksRepository = ReturnType<typeof createLinksRepository>;

/** A link's names for its events (db/outbox-events.ts). */
const linkNames = (link: NamedLink) => ({ link_id: Number(link.id), domain_id: link.domain_id, names: namesOf(link) });

export const tagsOf = (row: Pick<LinkRow, 'tags'>): string[] => (row.tags === '' ? [] : row.tags.split(','));

async function writeTags(tx: Db, linkId: number, tags: string[]): Promise<void> {
  if (tags.length)
    await tx
      .insertInto('link_tags')
      .values(tags.map((tag) => ({ link_id: linkId, tag })))
      .execute();
}

/** The scan's test of `q` (see `filtered`). */
function textMatches(text: string, dialect: Pick<Storage['dialect'], 'containsIgnoringCase'>): RawBuilder<SqlBool> {
  const inAliases = text.includes(',') ? sql<SqlBool>`1 = 0` : dialect.containsIgnoringCase('links.aliases', text);
  return sql<SqlBool>`(${dialect.containsIgnoringCase('links.original_url', text)} or ${dialect.containsIgnoringCase('links.short_code', text)} or ${dialect.containsIgnoringCase('links.title', text)} or ${inAliases})`;
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
  dialect: Pick<Storage['dialect'], 'containsIgnoringCase' | 'name'>,
  candidates: RawBuilder<SqlBool> | null,
): LinksQuery {
  let q = base;
  if (filter.domainId !== undefined) q = q.where('domain_id', '=', filter.domainId);
  if (filter.domainIds !== undefined)
    q = filter.domainIds.length ? q.where('domain_id', 'in', [...filter.domainIds]) : q.where(sql<boolean>`1 = 0`);
  if (filter.tag !== undefined) {
    const tag = filter.tag;
    // Beside the search index's candidates (at most a few thousand on SQLite), the tag only filters them: `+id`
    // keeps SQLite from probing the id index for every pair of the two lists (10,000 × 5,000: 11 s, against 10 ms).
    const id = candidates && dialect.name === 'sqlite' ? sql<number>`+links.id` : sql<number>`links.id`;
    q = q.where(id, 'in', (eb) => eb.selectFrom('link_tags').select('link_id').where('tag', '=', tag));
  }
  if (filter.q !== undefined) {
    const text = filter.q;
    if (candidates) q = q.where(() => candidates);
    q = q.where(() => textMatches(text, dialect));
  }
  return q;
}

/**
 * Writes a change's event to the outbox in its transaction (db/outbox.ts): every instance's link cache, and beside
 * the CLI the embedded server's, forgets the names it names. `toAll`: this instance hears it too, for a change
 * inside a caller's transaction, whose commit comes after the service dropped the names from the cache: a visit in
 * between may have cached the state before it.
 */
type Announce = (tx: Db, event: OutboxEvent, at: number, toAll?: boolean) => Promise<void>;

function linkChangeAnnouncer(dialect: Pick<Storage['dialect'], 'notify'>, changeOrigin: string): Announce {
  return (tx, event, at, toAll = false) => recordEvent(tx, dialect, event, { origin: toAll ? null : changeOrigin, at });
}

function createLinkInsertion(deps: {
  db: Kysely<Database>;
  fast: FastStatements | null;
  announce: Announce;
  origin: string;
}) {
  const { db, fast, announce } = deps;
  const insertGrouped = fast ? groupedInsert(fast, deps.origin) : null;
  return {
    /**
     * Inserts the link (and its tags) and claims its code on its domain in one transaction. The primary key
     * of link_codes is the one arbiter of uniqueness, so a taken (or tombstoned) code surfaces as a unique
     * violation.
     */
    async insert(row: NewCodedLink, outer?: Transaction<Database>): Promise<LinkRow> {
      // On the embedded engine, outside a caller's transaction: prepared, committed with the other creations
      // of this event-loop turn (through Kysely, with a commit each, a creation cost about four times as much).
      if (!outer && insertGrouped) return insertGrouped(row);
      const claim = async (tx: Db) => {
        const created = await tx.insertInto('links').values(row).returningAll().executeTakeFirstOrThrow();
        await tx
          .insertInto('link_codes')
          .values({
            domain_id: created.domain_id,
            code: row.short_code,
            link_id: created.id,
            retired_at: null,
            retired_reason: null,
          })
          .execute();
        await claimAliases(tx, created.domain_id, created.id, aliasesOf(created));
        await writeTags(tx, created.id, tagsOf(created));
        // an instance may hold a cached "missing" for any of its names
        const event = { type: 'link.created', data: { ...linkNames(created), user_id: created.user_id } } as const;
        await announce(tx, event, created.created_at, outer !== undefined);
        return created;
      };
      if (!outer) return db.transaction().execute(claim);
      // Inside a caller's transaction (an idempotent request) a collision must not abort the whole transaction
      // (PostgreSQL would refuse every later statement): the claim runs under a savepoint that a unique
      // violation rolls back, so the service can retry with another code.
      await sql`savepoint link_code_claim`.execute(outer);
      try {
        const created = await claim(outer);
        await sql`release savepoint link_code_claim`.execute(outer);
        return created;
      } catch (err) {
        await sql`rollback to savepoint link_code_claim`.execute(outer);
        throw err;
      }
    },
  };
}

/** A PATCH and a link's end (deleted or expired), each in its own transaction. */
function createLinkChanges(deps: { db: Kysely<Database>; announce: Announce }) {
  const { db, announce } = deps;
  return {
    /**
     * Applies a PATCH: the version grows by one, tags are rewritten when they changed. With `expectedVersion`
     * the update is conditional (If-Match); undefined when the link is gone or its version moved on. A move
     * to another domain claims the code there (a unique violation when it is taken) and retires it here.
     */
    async update(
      link: NamedLink,
      changes: LinkChanges,
      expectedVersion: number | null,
      at: number,
    ): Promise<LinkRow | undefined> {
      const { id } = link;
      return db.transaction().execute(async (tx) => {
        let q = tx
          .updateTable('links')
          .set((eb) => ({ ...changes, updated_at: at, version: eb('version', '+', 1) }))
          .where('id', '=', id);
        if (expectedVersion !== null) q = q.where('version', '=', expectedVersion);
        const row = await q.returningAll().executeTakeFirst();
        if (!row) return undefined;
        if (changes.tags !== undefined) {
          await tx.deleteFrom('link_tags').where('link_id', '=', id).execute();
          await writeTags(tx, id, tagsOf(row));
        }
        if (row.domain_id !== link.domain_id) {
          // Every name moves: retired on the old domain (by name, through the primary key), claimed on the new one.
          await tx
            .updateTable('link_codes')
            .set({ link_id: null, retired_at: at, retired_reason: 'deleted' })
            .where('domain_id', '=', link.domain_id)
            .where('code', 'in', namesOf(link))
            .where('link_id', '=', id)
            .execute();
          await tx
            .insertInto('link_codes')
            .values({
              domain_id: row.domain_id,
              code: row.short_code,
              link_id: id,
              retired_at: null,
              retired_reason: null,
            })
            .execute();
          await claimAliases(tx, row.domain_id, id, aliasesOf(row));
        } else if (changes.aliases !== undefined) {
          await replaceAliases(tx, link, aliasesOf(row), at);
        }
        const changed = Object.keys(changes) as LinkField[];
        const before = { domain_id: link.domain_id, names: namesOf(link) };
        await announce(tx, { type: 'link.updated', data: { ...linkNames(row), changed, before } }, at);
        return row;
      });
    },

    /**
     * Removes the link (its clicks, rollups and tags go with it by cascade) and leaves the code as a
     * tombstone; its owner's account keeps its click counts (deleted_link_clicks). False when the link was
     * already gone.
     */
    async retire(link: NamedLink, reason: 'deleted' | 'expired', at: number): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const gone = await tx
          .deleteFrom('links')
          .where('id', '=', link.id)
          .returning(['user_id', 'click_count', 'bot_clicks'])
          .executeTakeFirst();
        if (!gone) return false;
        if (gone.user_id !== null && Number(gone.click_count) > 0) {
          await tx
            .updateTable('users')
            .set((eb) => ({
              deleted_link_clicks: eb('deleted_link_clicks', '+', Number(gone.click_count)),
              deleted_link_bots: eb('deleted_link_bots', '+', Number(gone.bot_clicks)),
            }))
            .where('id', '=', gone.user_id)
            .execute();
        }
        // Every name of the link on its domain becomes a tombstone (found by name: the primary key; aliases
        // removed before are tombstones already).
        await tx
          .updateTable('link_codes')
          .set({ retired_at: at, retired_reason: reason })
          .where('domain_id', '=', link.domain_id)
          .where('code', 'in', namesOf(link))
          .where('link_id', '=', link.id)
          .execute();
        await announce(tx, { type: 'link.deleted', data: { ...linkNames(link), reason } }, at);
        return true;
      });
    },
  };
}

/** Reads of links as the API and the admin tools see them. */
function createLinkQueries(deps: {
  db: Kysely<Database>;
  dialect: Pick<Storage['dialect'], 'containsIgnoringCase' | 'name'>;
  fast: FastStatements | null;
  paginator: Paginator;
}) {
  const { db, dialect, fast, paginator } = deps;
  const candidatesOf = (filter: LinkListFilter) =>
    filter.q === undefined ? null : searchCandidates(db, dialect, filter.q, textMatches(filter.q, dialect));
  const findStatement: FastStatement<[number, string], LinkRow> | null =
    fast?.prepare<[number, string], LinkRow>('select * from links where domain_id = ? and short_code = ?') ?? null;

  /** One page of `base` in the list's order; the total too in page mode. */
  async function onePage(base: LinksQuery, list: ResolvedList): Promise<{ rows: LinkRow[]; total: number | null }> {
    const rows = await paginator.apply(base.selectAll('links'), list, 'links').execute();
    const total =
      list.mode === 'page'
        ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
        : null;
    return { rows, total };
  }

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
      return onePage(filtered(base, filter, dialect, await candidatesOf(filter)), list);
    },

    /** Every link, for admins: expired ones until the sweep removes them, disabled ones, anonymous ones. */
    async listAll(
      now: number,
      list: ResolvedList,
      filter: AllLinksFilter,
    ): Promise<{ rows: LinkRow[]; total: number | null }> {
      let base = filtered(db.selectFrom('links'), filter, dialect, await candidatesOf(filter));
      if (filter.userId !== undefined) base = base.where('user_id', '=', filter.userId);
      if (filter.status === 'disabled') base = base.where('disabled_at', 'is not', null);
      if (filter.status === 'expired') base = base.where('expires_at', '<=', now);
      if (filter.status === 'active') {
        base = base
          .where('disabled_at', 'is', null)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      }
      return onePage(base, list);
    },

    /** Links in id order after `afterId` (disable-blocked walks every link in batches). */
    async scan(
      afterId: number,
      limit: number,
    ): Promise<Array<NamedLink & Pick<LinkRow, 'original_url' | 'disabled_at'>>> {
      return db
        .selectFrom('links')
        .select(['id', 'short_code', 'domain_id', 'aliases', 'original_url', 'disabled_at'])
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
    },
  };
}

/**
 * Plain rows in and out. One exception to "everything through Kysely" on the embedded engine, where a
 * better-sqlite3 prepared statement answers synchronously in a few microseconds: link creation, group-committed
 * (link-insert.sqlite.ts); the visit's reads are the redirect module's (redirect.repository.ts). PostgreSQL runs the
 * same queries through Kysely. Every change that a redirect could see is announced in its own transaction
 * (an event in the outbox, db/outbox.ts: read by every instance's link cache), signed with `changeOrigin`,
 * this app instance's name in the outbox.
 */
export function createLinksRepository(
  storage: Pick<Storage, 'db' | 'sqlite' | 'dialect'>,
  paginator: Paginator,
  changeOrigin = 'ferry',
) {
  const { db, dialect } = storage;
  const fast = fastStatements(storage);
  const announce = linkChangeAnnouncer(dialect, changeOrigin);
  return {
    ...createLinkInsertion({ db, fast, announce, origin: changeOrigin }),
    ...createLinkChanges({ db, announce }),
    ...createLinkQueries({ db, dialect, fast, paginator }),
  };
}

export type { NamedLink, NewCodedLink, NewLinkRow };
export { AliasTakenError, aliasesOf, namesOf } from './link-aliases.js';
