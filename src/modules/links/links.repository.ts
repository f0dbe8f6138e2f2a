import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import { fastStatements, type FastStatement, type Storage } from '../../db/database.js';
import type { Database, LinkRow, NewLinkRow } from '../../db/types.js';
import { changeMessage, LINK_CHANGES_CHANNEL } from '../../infra/pg-link-cache-bus.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';
import { groupedInsert, type NewCodedLink } from './link-insert.sqlite.js';
import type { LinkStatus } from './links.schemas.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A code as the redirect needs it: the link (if it still exists) and the tombstone state of the code. */
export interface CodeLookup {
  id: number | null;
  original_url: string | null;
  expires_at: number | null;
  max_visits: number | null;
  forward_query: number | null;
  password_hash: string | null;
  disabled_at: number | null;
  retired_reason: 'deleted' | 'expired' | null;
}

/** Whether a visit may be redirected under the link's visit limit. */
export type VisitAdmission = 'admitted' | 'exhausted' | 'missing';

/** The fields a PATCH may change (the service has validated them). */
export type LinkChanges = Partial<Pick<LinkRow, 'original_url' | 'expires_at' | 'max_visits' | 'forward_query' | 'password_hash' | 'tags' | 'title' | 'disabled_at' | 'disabled_reason'>>;

export interface LinkListFilter {
  tag?: string | undefined;
  q?: string | undefined;
}

/** The admin list's filters (SPEC §18): a user's links, links in one state. */
export interface AllLinksFilter extends LinkListFilter {
  userId?: number | undefined;
  status?: LinkStatus | undefined;
}

type LinksQuery = SelectQueryBuilder<Database, 'links', object>;

export type LinksRepository = ReturnType<typeof createLinksRepository>;

const LOOKUP_COLUMNS = ['id', 'original_url', 'expires_at', 'max_visits', 'forward_query', 'password_hash', 'disabled_at'] as const;
const LOOKUP_SQL = `select ${LOOKUP_COLUMNS.map((c) => `l.${c} as ${c}`).join(', ')}, c.retired_reason as retired_reason
  from link_codes c left join links l on l.short_code = c.code where c.code = ?`;
// One statement decides a visit under a limit: the row lock (PostgreSQL) or the single writer (SQLite) makes
// the check and the increment one step, so concurrent visits on any number of instances admit max_visits.
const ADMIT_SQL = 'update links set visit_count = visit_count + 1 where id = ? and (max_visits is null or visit_count < max_visits) returning visit_count';

export const tagsOf = (row: Pick<LinkRow, 'tags'>): string[] => (row.tags === '' ? [] : row.tags.split(','));

async function writeTags(tx: Db, linkId: number, tags: string[]): Promise<void> {
  if (tags.length) await tx.insertInto('link_tags').values(tags.map((tag) => ({ link_id: linkId, tag }))).execute();
}

/** `tag` must be one of the link's, `q` a substring of the URL, the code or the title (any case). */
function filtered(base: LinksQuery, filter: LinkListFilter, dialect: Pick<Storage['dialect'], 'containsIgnoringCase'>): LinksQuery {
  let q = base;
  if (filter.tag !== undefined) {
    const tag = filter.tag;
    q = q.where('id', 'in', (eb) => eb.selectFrom('link_tags').select('link_id').where('tag', '=', tag));
  }
  if (filter.q !== undefined) {
    const text = filter.q;
    q = q.where(() => sql<boolean>`(${dialect.containsIgnoringCase('links.original_url', text)} or ${dialect.containsIgnoringCase('links.short_code', text)} or ${dialect.containsIgnoringCase('links.title', text)})`);
  }
  return q;
}

/**
 * Plain rows in and out. Two exceptions to "everything through Kysely" on the embedded engine, where a
 * better-sqlite3 prepared statement answers synchronously in a few microseconds: the redirect's cache miss
 * and a visit under a limit; and link creation, group-committed (link-insert.sqlite.ts). PostgreSQL runs the
 * same queries through Kysely. Every change that a redirect could see is announced in its own transaction
 * (dialect.notify: NOTIFY on PostgreSQL, delivered on commit to every instance's link cache), signed with
 * `changeOrigin`, this app instance's name in those messages.
 */
export function createLinksRepository(storage: Pick<Storage, 'db' | 'sqlite' | 'dialect'>, paginator: Paginator, changeOrigin = 'ferry') {
  const { db, dialect } = storage;
  const fast = fastStatements(storage);
  const lookupStatement: FastStatement<[string], CodeLookup> | null = fast?.prepare<[string], CodeLookup>(LOOKUP_SQL) ?? null;
  const admitStatement: FastStatement<[number], { visit_count: number }> | null = fast?.prepare<[number], { visit_count: number }>(ADMIT_SQL) ?? null;
  const insertGrouped = fast ? groupedInsert(fast) : null;
  const findStatement: FastStatement<[string], LinkRow> | null = fast?.prepare<[string], LinkRow>('select * from links where short_code = ?') ?? null;
  // `toAll`: this instance hears it too. For a change inside a caller's transaction, whose commit comes after
  // the service dropped the code from the cache: a visit in between may have cached the state before it.
  /** One page of `base` in the list's order; the total too in page mode. */
  async function onePage(base: LinksQuery, list: ResolvedList): Promise<{ rows: LinkRow[]; total: number | null }> {
    const rows = await paginator.apply(base.selectAll('links'), list, 'links').execute();
    const total = list.mode === 'page'
      ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
      : null;
    return { rows, total };
  }
  const announce = (tx: Db, code: string, toAll = false) => dialect.notify(tx, LINK_CHANGES_CHANNEL, changeMessage(toAll ? '*' : changeOrigin, code));

  /** After a visit was refused: was the link exhausted, or is it gone? */
  async function refusal(id: number): Promise<VisitAdmission> {
    const row = await db.selectFrom('links').select('id').where('id', '=', id).executeTakeFirst();
    return row ? 'exhausted' : 'missing';
  }

  return {
    /**
     * Claims the code and inserts the link (and its tags) in one transaction. The primary key of link_codes
     * is the one arbiter of uniqueness, so a taken (or tombstoned) code surfaces as a unique violation.
     */
    async insert(row: NewCodedLink, outer?: Transaction<Database>): Promise<LinkRow> {
      // On the embedded engine, outside a caller's transaction: prepared, committed with the other creations
      // of this event-loop turn (through Kysely, with a commit each, a creation cost about four times as much).
      if (!outer && insertGrouped) return insertGrouped(row);
      const claim = async (tx: Db) => {
        await tx.insertInto('link_codes').values({ code: row.short_code, retired_at: null, retired_reason: null }).execute();
        const created = await tx.insertInto('links').values(row).returningAll().executeTakeFirstOrThrow();
        await writeTags(tx, created.id, tagsOf(created));
        await announce(tx, row.short_code, outer !== undefined); // an instance may hold a cached "missing" for this code
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

    async findByCode(code: string, tx: Db = db): Promise<LinkRow | undefined> {
      // Prepared on the embedded engine (every stats and link read starts here).
      if (tx === db && findStatement && fast!.usable()) return findStatement.get(code);
      return tx.selectFrom('links').selectAll().where('short_code', '=', code).executeTakeFirst();
    },

    /**
     * Applies a PATCH: the version grows by one, tags are rewritten when they changed. With `expectedVersion`
     * the update is conditional (If-Match); undefined when the link is gone or its version moved on.
     */
    async update(id: number, changes: LinkChanges, expectedVersion: number | null, at: number): Promise<LinkRow | undefined> {
      return db.transaction().execute(async (tx) => {
        let q = tx.updateTable('links').set((eb) => ({ ...changes, updated_at: at, version: eb('version', '+', 1) })).where('id', '=', id);
        if (expectedVersion !== null) q = q.where('version', '=', expectedVersion);
        const row = await q.returningAll().executeTakeFirst();
        if (!row) return undefined;
        if (changes.tags !== undefined) {
          await tx.deleteFrom('link_tags').where('link_id', '=', id).execute();
          await writeTags(tx, id, tagsOf(row));
        }
        await announce(tx, row.short_code);
        return row;
      });
    },

    /** The redirect's cache miss; undefined when the code was never issued. */
    lookupCode(code: string): CodeLookup | undefined | Promise<CodeLookup | undefined> {
      if (lookupStatement) return lookupStatement.get(code);
      return db
        .selectFrom('link_codes as c')
        .leftJoin('links as l', 'l.short_code', 'c.code')
        .select(['l.id as id', 'l.original_url as original_url', 'l.expires_at as expires_at', 'l.max_visits as max_visits',
          'l.forward_query as forward_query', 'l.password_hash as password_hash', 'l.disabled_at as disabled_at', 'c.retired_reason as retired_reason'])
        .where('c.code', '=', code)
        .executeTakeFirst();
    },

    /** Counts one visit against the link's limit if it has visits left (one conditional UPDATE). */
    admitVisit(id: number): VisitAdmission | Promise<VisitAdmission> {
      if (admitStatement && fast!.usable()) return admitStatement.get(id) ? 'admitted' : refusal(id);
      return db
        .updateTable('links')
        .set((eb) => ({ visit_count: eb('visit_count', '+', 1) }))
        .where('id', '=', id)
        .where((eb) => eb.or([eb('max_visits', 'is', null), eb('visit_count', '<', eb.ref('max_visits'))]))
        .returning('visit_count')
        .executeTakeFirst()
        .then((row) => (row ? 'admitted' : refusal(id)));
    },

    /** Whether the link has visits left, without counting one (bots, HEAD). */
    async hasVisitsLeft(id: number): Promise<VisitAdmission> {
      const row = await db.selectFrom('links').select(['visit_count', 'max_visits']).where('id', '=', id).executeTakeFirst();
      if (!row) return 'missing';
      return row.max_visits === null || Number(row.visit_count) < Number(row.max_visits) ? 'admitted' : 'exhausted';
    },

    /**
     * Removes the link (its clicks, rollups and tags go with it by cascade) and leaves the code as a
     * tombstone; its owner's account keeps its click counts (deleted_link_clicks). False when the link was
     * already gone.
     */
    async retire(id: number, code: string, reason: 'deleted' | 'expired', at: number): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const gone = await tx.deleteFrom('links').where('id', '=', id).returning(['user_id', 'click_count', 'bot_clicks']).executeTakeFirst();
        if (!gone) return false;
        if (gone.user_id !== null && Number(gone.click_count) > 0) {
          await tx.updateTable('users').set((eb) => ({
            deleted_link_clicks: eb('deleted_link_clicks', '+', Number(gone.click_count)),
            deleted_link_bots: eb('deleted_link_bots', '+', Number(gone.bot_clicks)),
          })).where('id', '=', gone.user_id).execute();
        }
        await tx.updateTable('link_codes').set({ retired_at: at, retired_reason: reason }).where('code', '=', code).execute();
        await announce(tx, code);
        return true;
      });
    },

    async findExpired(now: number, limit: number): Promise<Array<Pick<LinkRow, 'id' | 'short_code'>>> {
      return db.selectFrom('links').select(['id', 'short_code']).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
    },

    /** A user's live links (expired ones are gone from the API); see `filtered` for tag and q. */
    async listByUser(userId: number, now: number, list: ResolvedList, filter: LinkListFilter): Promise<{ rows: LinkRow[]; total: number | null }> {
      const base = db.selectFrom('links').where('user_id', '=', userId).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      return onePage(filtered(base, filter, dialect), list);
    },

    /** Every link, for admins: expired ones until the sweep removes them, disabled ones, anonymous ones. */
    async listAll(now: number, list: ResolvedList, filter: AllLinksFilter): Promise<{ rows: LinkRow[]; total: number | null }> {
      let base = filtered(db.selectFrom('links'), filter, dialect);
      if (filter.userId !== undefined) base = base.where('user_id', '=', filter.userId);
      if (filter.status === 'disabled') base = base.where('disabled_at', 'is not', null);
      if (filter.status === 'expired') base = base.where('expires_at', '<=', now);
      if (filter.status === 'active') {
        base = base.where('disabled_at', 'is', null).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      }
      return onePage(base, list);
    },

    /** Links in id order after `afterId` (disable-blocked walks every link in batches). */
    async scan(afterId: number, limit: number): Promise<Array<Pick<LinkRow, 'id' | 'short_code' | 'original_url' | 'disabled_at'>>> {
      return db.selectFrom('links').select(['id', 'short_code', 'original_url', 'disabled_at']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
    },
  };
}

export type { NewCodedLink, NewLinkRow };
