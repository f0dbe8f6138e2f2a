import { fastStatements, type FastStatement, type Storage } from '../../db/database.js';

/** A code as the redirect needs it: the link (if it still exists) and the tombstone state of the code. */
export interface CodeLookup {
  id: number | null;
  original_url: string | null;
  expires_at: number | null;
  max_visits: number | null;
  forward_query: number | null;
  password_hash: string | null;
  disabled_at: number | null;
  /** the link's own code (the visit came through an alias when it is not the name looked up) */
  short_code: string | null;
  /** SPEC §21: the routing rules as stored (JSON), compiled once into the cached target */
  rules: string | null;
  /** SPEC §21: the preview for unfurlers, JSON text (links/link-preview.ts); null: none */
  preview: string | null;
  retired_reason: 'deleted' | 'expired' | null;
  /** SPEC §24: 'ok' | 'broken' | 'unknown' (null: no link) */
  health_status: string | null;
  /** SPEC §24: where a broken link's visits go first */
  fallback_url: string | null;
}

/** Whether a visit may be redirected under the link's visit limit. */
export type VisitAdmission = 'admitted' | 'exhausted' | 'missing';

const LOOKUP_COLUMNS = [
  'id',
  'original_url',
  'expires_at',
  'max_visits',
  'forward_query',
  'password_hash',
  'disabled_at',
  'short_code',
  'rules',
  'preview',
  'health_status',
  'fallback_url',
] as const;
// The namespace of (domain, code) decides: a code names its link by id (link_codes.link_id), so other names of
// a link can share the lookup.
const LOOKUP_SQL = `select ${LOOKUP_COLUMNS.map((c) => `l.${c} as ${c}`).join(', ')}, c.retired_reason as retired_reason
  from link_codes c left join links l on l.id = c.link_id where c.domain_id = ? and c.code = ?`;
// One statement decides a visit under a limit: the row lock (PostgreSQL) or the single writer (SQLite) makes
// the check and the increment one step, so concurrent visits on any number of instances admit max_visits.
const ADMIT_SQL =
  'update links set visit_count = visit_count + 1 where id = ? and (max_visits is null or visit_count < max_visits) returning visit_count';

/** LOOKUP_SQL through Kysely: a domain's names with what the redirect reads of each (PostgreSQL, and batches). */
const codesOf = (db: Storage['db'], domainId: number) =>
  db
    .selectFrom('link_codes as c')
    .leftJoin('links as l', 'l.id', 'c.link_id')
    .select([
      'l.id as id',
      'l.original_url as original_url',
      'l.expires_at as expires_at',
      'l.max_visits as max_visits',
      'l.forward_query as forward_query',
      'l.password_hash as password_hash',
      'l.disabled_at as disabled_at',
      'l.short_code as short_code',
      'l.rules as rules',
      'l.preview as preview',
      'l.health_status as health_status',
      'l.fallback_url as fallback_url',
      'c.retired_reason as retired_reason',
    ])
    .where('c.domain_id', '=', domainId);

/**
 * What a visit reads and counts of links, in a repository of its own (the links module keeps the writes): its
 * name's target and its link's visit limit. On the embedded engine a better-sqlite3 prepared statement answers
 * synchronously in a few microseconds (the cache miss, and a visit under a limit); PostgreSQL runs the same
 * queries through Kysely.
 */
export function createRedirectQueries(storage: Pick<Storage, 'db' | 'sqlite'>) {
  const { db } = storage;
  const fast = fastStatements(storage);
  const lookupStatement: FastStatement<[number, string], CodeLookup> | null =
    fast?.prepare<[number, string], CodeLookup>(LOOKUP_SQL) ?? null;
  const admitStatement: FastStatement<[number], { visit_count: number }> | null =
    fast?.prepare<[number], { visit_count: number }>(ADMIT_SQL) ?? null;

  /** After a visit was refused: was the link exhausted, or is it gone? */
  async function refusal(id: number): Promise<VisitAdmission> {
    const row = await db.selectFrom('links').select('id').where('id', '=', id).executeTakeFirst();
    return row ? 'exhausted' : 'missing';
  }

  return {
    /** The redirect's cache miss; undefined when the code was never issued on that domain. */
    lookupCode(code: string, domainId = 0): CodeLookup | undefined | Promise<CodeLookup | undefined> {
      if (lookupStatement) return lookupStatement.get(domainId, code);
      return codesOf(db, domainId).where('c.code', '=', code).executeTakeFirst();
    },

    /**
     * Many names of one domain at once (the cache's background re-read of stale entries): each found name with
     * its lookup; a name missing from the answer was never issued there.
     */
    async lookupCodes(names: readonly string[], domainId = 0): Promise<Array<CodeLookup & { code: string }>> {
      return codesOf(db, domainId).select('c.code as code').where('c.code', 'in', names).execute();
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
      const row = await db
        .selectFrom('links')
        .select(['visit_count', 'max_visits'])
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return 'missing';
      return row.max_visits === null || Number(row.visit_count) < Number(row.max_visits) ? 'admitted' : 'exhausted';
    },
  };
}

export type RedirectQueries = ReturnType<typeof createRedirectQueries>;
