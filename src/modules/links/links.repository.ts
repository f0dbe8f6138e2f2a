import type SQLite from 'better-sqlite3';
import { sql, type Kysely, type Transaction } from 'kysely';
import { outsideKyselyTransaction, type Storage } from '../../db/database.js';
import type { Database, LinkRow, NewLinkRow } from '../../db/types.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A code as the redirect needs it: the link (if it still exists) and the tombstone state of the code. */
export interface CodeLookup {
  id: number | null;
  original_url: string | null;
  expires_at: number | null;
  retired_reason: 'deleted' | 'expired' | null;
}

export type LinksRepository = ReturnType<typeof createLinksRepository>;

const LOOKUP_SQL = `select l.id as id, l.original_url as original_url, l.expires_at as expires_at, c.retired_reason as retired_reason
  from link_codes c left join links l on l.short_code = c.code where c.code = ?`;

type NewCodedLink = NewLinkRow & { short_code: string };

/**
 * The insert below with better-sqlite3 prepared statements, group-committed: the inserts asked for during
 * one turn of the event loop are written at the next (setImmediate) in one transaction, each under its own
 * savepoint (better-sqlite3 nests a transaction as a savepoint), so a taken code fails its own insert only.
 * A commit costs per page it writes to the WAL (the links table, its indexes, link_codes), and concurrent
 * creations share most of those pages; each caller still hears of its link only once it is committed.
 *
 * Only outside Kysely's transactions (outsideKyselyTransaction): if one holds the connection when the group
 * is due, the group waits for the next turn.
 */
function groupedInsert(sqlite: SQLite.Database): (row: NewCodedLink) => Promise<LinkRow> {
  const claim = sqlite.prepare('insert into link_codes (code, retired_at, retired_reason) values (?, null, null)');
  const insert = sqlite.prepare<[string, number | null, string, number | null, number], LinkRow>(
    'insert into links (short_code, user_id, original_url, expires_at, created_at) values (?, ?, ?, ?, ?) returning *',
  );
  const one = sqlite.transaction((row: NewCodedLink): LinkRow => {
    claim.run(row.short_code);
    return insert.get(row.short_code, row.user_id ?? null, row.original_url, row.expires_at ?? null, row.created_at)!;
  });
  type Waiting = { row: NewCodedLink; resolve: (row: LinkRow) => void; reject: (err: unknown) => void };
  let waiting: Waiting[] = [];
  const group = sqlite.transaction((batch: Waiting[]) =>
    batch.map((w): { row: LinkRow } | { err: unknown } => {
      try {
        return { row: one(w.row) };
      } catch (err) {
        return { err };
      }
    }),
  );
  const flush = (): void => {
    if (!outsideKyselyTransaction(sqlite)) {
      setImmediate(flush);
      return;
    }
    const batch = waiting;
    waiting = [];
    let outcomes: Array<{ row: LinkRow } | { err: unknown }>;
    try {
      outcomes = group(batch);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => {
      const o = outcomes[i]!;
      if ('row' in o) w.resolve(o.row);
      else w.reject(o.err);
    });
  };
  return (row) => new Promise<LinkRow>((resolve, reject) => {
    if (waiting.length === 0) setImmediate(flush);
    waiting.push({ row, resolve, reject });
  });
}

/**
 * Plain rows in and out. The one exception to "everything through Kysely" is the redirect's cache miss on
 * the embedded engine: a better-sqlite3 prepared statement answers synchronously in a few microseconds,
 * without Kysely's query compilation and promise chain. PostgreSQL uses the same query through Kysely.
 */
export function createLinksRepository(storage: Pick<Storage, 'db' | 'sqlite'>, paginator: Paginator) {
  const { db } = storage;
  const lookupStatement: SQLite.Statement<[string], CodeLookup> | null = storage.sqlite?.prepare(LOOKUP_SQL) ?? null;
  const insertGrouped = storage.sqlite ? groupedInsert(storage.sqlite) : null;
  const findStatement: SQLite.Statement<[string], LinkRow> | null = storage.sqlite?.prepare('select * from links where short_code = ?') ?? null;

  return {
    /**
     * Claims the code and inserts the link in one transaction. The primary key of link_codes is the one
     * arbiter of uniqueness, so a taken (or tombstoned) code surfaces as a unique violation, never as a race.
     */
    async insert(row: NewCodedLink, outer?: Transaction<Database>): Promise<LinkRow> {
      // On the embedded engine, outside a caller's transaction: the same two statements, prepared, committed
      // with the other creations of this event-loop turn (through Kysely, with a commit each, a link creation
      // cost about four times as much; bench/ link-create).
      if (!outer && insertGrouped) return insertGrouped(row);
      const claim = async (tx: Db) => {
        await tx.insertInto('link_codes').values({ code: row.short_code, retired_at: null, retired_reason: null }).execute();
        return tx.insertInto('links').values(row).returningAll().executeTakeFirstOrThrow();
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
      if (tx === db && findStatement && outsideKyselyTransaction(storage.sqlite!)) return findStatement.get(code);
      return tx.selectFrom('links').selectAll().where('short_code', '=', code).executeTakeFirst();
    },

    /** The redirect's cache miss; undefined when the code was never issued. */
    lookupCode(code: string): CodeLookup | undefined | Promise<CodeLookup | undefined> {
      if (lookupStatement) return lookupStatement.get(code);
      return db
        .selectFrom('link_codes as c')
        .leftJoin('links as l', 'l.short_code', 'c.code')
        .select(['l.id as id', 'l.original_url as original_url', 'l.expires_at as expires_at', 'c.retired_reason as retired_reason'])
        .where('c.code', '=', code)
        .executeTakeFirst();
    },

    /**
     * Removes the link (its clicks and rollups go with it by cascade) and leaves the code as a tombstone.
     * False when the link was already gone.
     */
    async retire(id: number, code: string, reason: 'deleted' | 'expired', at: number): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const res = await tx.deleteFrom('links').where('id', '=', id).executeTakeFirst();
        if (Number(res.numDeletedRows) === 0) return false;
        await tx.updateTable('link_codes').set({ retired_at: at, retired_reason: reason }).where('code', '=', code).execute();
        return true;
      });
    },

    async findExpired(now: number, limit: number): Promise<Array<Pick<LinkRow, 'id' | 'short_code'>>> {
      return db.selectFrom('links').select(['id', 'short_code']).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
    },

    async listByUser(userId: number, now: number, list: ResolvedList): Promise<{ rows: LinkRow[]; total: number | null }> {
      const base = db
        .selectFrom('links')
        .where('user_id', '=', userId)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      const rows = await paginator.apply(base.selectAll('links'), list, 'links').execute();
      const total = list.mode === 'page'
        ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
        : null;
      return { rows, total };
    },
  };
}
