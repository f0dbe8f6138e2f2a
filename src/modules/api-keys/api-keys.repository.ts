import { domainOwners } from '../../db/domain-owners.js';
import type { Kysely, Transaction } from 'kysely';
import type { FastStatements } from '../../db/database.js';
import type { Dialect } from '../../db/dialect.js';
import { recordAudit, type AuditActor, type AuditEntry } from '../../db/audit-log.js';
import { inTransaction, recordEvent, type ApiKeyEvent } from '../../db/outbox.js';
import type { ApiKeyRow, Database, UserRow } from '../../db/types.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';

type Db = Kysely<Database> | Transaction<Database>;
type NewApiKey = Omit<ApiKeyRow, 'id' | 'last_used_at'>;

/** A stored key with the current role and status of its user: what authenticating a request needs. */
export type ApiKeyWithUser = Pick<ApiKeyRow, 'id' | 'user_id' | 'scopes' | 'expires_at' | 'last_used_at' | 'domains'> &
  Pick<UserRow, 'role' | 'status'>;

export type ApiKeysRepository = ReturnType<typeof createApiKeysRepository>;

/** A key and its user's current role and status, by the key's hash. */
const byHashQuery = (tx: Db, keyHash: string) =>
  tx
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select([
      'api_keys.id',
      'api_keys.user_id',
      'api_keys.scopes',
      'api_keys.expires_at',
      'api_keys.last_used_at',
      'api_keys.domains',
      'users.role',
      'users.status',
    ])
    .where('api_keys.key_hash', '=', keyHash);

/** A user's keys as read: by hash (authentication), by id, a page of them. */
function createApiKeyReads(db: Kysely<Database>, paginator: Paginator, fast: FastStatements | null) {
  // Prepared on the embedded engine from the same query's SQL: every request made with a key asks.
  const byHash = fast?.prepare<[string], ApiKeyWithUser>(byHashQuery(db, '').compile().sql) ?? null;
  return {
    /** One indexed read per request made with a key: the key and its user's current role and status. */
    async findByHash(keyHash: string, tx: Db = db): Promise<ApiKeyWithUser | undefined> {
      if (tx === db && byHash && fast!.usable()) return byHash.get(keyHash);
      return byHashQuery(tx, keyHash).executeTakeFirst();
    },

    async findForUser(userId: number, keyId: number, tx: Db = db): Promise<ApiKeyRow | undefined> {
      return tx
        .selectFrom('api_keys')
        .selectAll()
        .where('id', '=', keyId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
    },

    async listForUser(
      userId: number,
      list: ResolvedList,
      tx: Db = db,
    ): Promise<{ rows: ApiKeyRow[]; total: number | null }> {
      const base = tx.selectFrom('api_keys').where('user_id', '=', userId);
      const rows = await paginator.apply(base.selectAll('api_keys'), list, 'api_keys').execute();
      const total =
        list.mode === 'page'
          ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
          : null;
      return { rows, total };
    },
  };
}

/** The no-op UPDATE that takes the user row's lock; false when there is no such user. */
const lockUser = async (tx: Db, userId: number): Promise<boolean> =>
  Number(
    (
      await tx
        .updateTable('users')
        .set((eb) => ({ id: eb.ref('id') }))
        .where('id', '=', userId)
        .executeTakeFirst()
    ).numUpdatedRows,
  ) > 0;

/** SPEC §23: a key created or revoked, and whose. */
const keyAudit = (
  action: 'api_key.created' | 'api_key.revoked',
  actor: AuditActor,
  key: Pick<ApiKeyRow, 'id' | 'user_id'> & { name?: string; scopes?: string },
  at?: number,
): AuditEntry => ({
  action,
  actor,
  target: { type: 'api_key', id: key.id },
  details: { user_id: Number(key.user_id), ...(key.name ? { name: key.name, scopes: key.scopes ?? '' } : {}) },
  ...(at !== undefined ? { at } : {}),
});

/** Plain rows in and out; a key created or revoked writes its event to the outbox in its transaction (db/outbox.ts). */
export function createApiKeysRepository(
  db: Kysely<Database>,
  paginator: Paginator,
  dialect: Pick<Dialect, 'notify'>,
  fast: FastStatements | null = null,
) {
  const announce = (tx: Db, type: ApiKeyEvent['type'], key: Pick<ApiKeyRow, 'id' | 'user_id'>) =>
    recordEvent(tx, dialect, { type, data: { api_key_id: Number(key.id), user_id: Number(key.user_id) } });
  return {
    /**
     * Inserts the key unless its user already has `max` keys; undefined when the user does not exist. The
     * no-op UPDATE of the user row takes that row's lock first (PostgreSQL; SQLite has one writer anyway), so
     * two creations racing for the last free place are counted one after the other.
     */
    async insertWithin(
      row: NewApiKey,
      max: number,
      actor: AuditActor = null,
    ): Promise<ApiKeyRow | 'user-missing' | 'full'> {
      return db.transaction().execute(async (tx) => {
        if (!(await lockUser(tx, row.user_id))) return 'user-missing';
        const { n } = await tx
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', row.user_id)
          .executeTakeFirstOrThrow();
        if (Number(n) >= max) return 'full';
        const created = await tx.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
        await announce(tx, 'api_key.created', created);
        await recordAudit(tx, keyAudit('api_key.created', actor, created, row.created_at));
        return created;
      });
    },

    /** The owners of these domains, by id (a key may be limited only to domains its user may use). */
    domainOwners: (ids: readonly number[]) => domainOwners(db, ids),

    ...createApiKeyReads(db, paginator, fast),
    async deleteForUser(userId: number, keyId: number, tx: Db = db, actor: AuditActor = null): Promise<boolean> {
      return inTransaction(tx, async (t) => {
        const res = await t
          .deleteFrom('api_keys')
          .where('id', '=', keyId)
          .where('user_id', '=', userId)
          .executeTakeFirst();
        const deleted = Number(res.numDeletedRows) > 0;
        if (deleted) await announce(t, 'api_key.revoked', { id: keyId, user_id: userId });
        if (deleted) await recordAudit(t, keyAudit('api_key.revoked', actor, { id: keyId, user_id: userId }));
        return deleted;
      });
    },

    /** Moves last_used_at forward (never back: another instance may have written a later use). */
    async recordUses(uses: ReadonlyMap<number, number>, tx: Db = db): Promise<void> {
      for (const [id, at] of uses) {
        await tx
          .updateTable('api_keys')
          .set({ last_used_at: at })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
          .execute();
      }
    },
  };
}
