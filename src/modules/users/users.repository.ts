import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { FastStatements } from '../../db/database.js';
import { recordAudit, type AuditEntry } from '../../db/audit-log.js';
import { inTransaction, recordEvent, type UserEvent } from '../../db/outbox.js';
import type { Database, NewUserRow, UserRow, UserUpdate } from '../../db/types.js';
import type { Paginator, ResolvedList } from '../../lib/pagination.js';

export interface UserFilters {
  role?: UserRow['role'];
  status?: UserRow['status'];
}

type Db = Kysely<Database> | Transaction<Database>;

export type UsersRepository = ReturnType<typeof createUsersRepository>;

/**
 * A change of a user row. `revokeTokens` (a password, role or status change, SPEC §12) raises the row's
 * `token_generation` by 1 in the change's own UPDATE: a value computed from a row read earlier could be the one
 * a concurrent change also wrote, and a token issued between the two would then outlive the second.
 */
export type UserChanges = Omit<UserUpdate, 'token_generation'> & { revokeTokens?: boolean };

/** What a write that would leave no active admin gets instead of a row (SPEC §17: 409 LAST_ADMIN). */
export const LAST_ADMIN = Symbol('last active admin');

const keepsAdmin = (changes: UserChanges): boolean =>
  (changes.role === undefined || changes.role === 'admin') &&
  (changes.status === undefined || changes.status === 'active');

/** Which of the given unique values are already held by another user. */
async function findTaken(
  tx: Db,
  username: string | undefined,
  email: string | undefined,
  exceptId: number | null,
): Promise<{ username: boolean; email: boolean }> {
  const rows = await tx
    .selectFrom('users')
    .select(['id', 'username_lower', 'email_lower'])
    .where((eb) =>
      eb.or([
        eb('username_lower', '=', username?.toLowerCase() ?? ''),
        eb('email_lower', '=', email?.toLowerCase() ?? ''),
      ]),
    )
    .execute();
  const others = rows.filter((r) => r.id !== exceptId);
  return {
    username: username !== undefined && others.some((r) => r.username_lower === username.toLowerCase()),
    email: email !== undefined && others.some((r) => r.email_lower === email.toLowerCase()),
  };
}

/** The writes of a user row, each with its event in the same transaction (db/outbox.ts). */
function createUserWrites(db: Kysely<Database>, dialect: Pick<Dialect, 'notify'>) {
  const announce = (tx: Db, type: UserEvent['type'], id: number) =>
    recordEvent(tx, dialect, { type, data: { user_id: Number(id) } });
  return {
    async insert(row: NewUserRow, tx: Db = db): Promise<UserRow> {
      return inTransaction(tx, async (t) => {
        const created = await t.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
        await announce(t, 'user.created', created.id);
        return created;
      });
    },

    /**
     * Applies the change and bumps `version` in one statement. With `expectedVersion`, only when the row still
     * has it (optimistic concurrency): undefined means the row is gone or was changed meanwhile.
     */
    async update(
      id: number,
      changes: UserChanges,
      expectedVersion: number | null,
      tx: Db = db,
      audit: readonly AuditEntry[] = [],
    ): Promise<UserRow | undefined> {
      const { revokeTokens = false, ...columns } = changes;
      return inTransaction(tx, async (t) => {
        let q = t
          .updateTable('users')
          .set((eb) => ({
            ...columns,
            version: eb('version', '+', 1),
            ...(revokeTokens ? { token_generation: eb('token_generation', '+', 1) } : {}),
          }))
          .where('id', '=', id);
        if (expectedVersion !== null) q = q.where('version', '=', expectedVersion);
        const row = await q.returningAll().executeTakeFirst();
        if (row) await announce(t, 'user.updated', id);
        if (row) await recordAudit(t, ...audit);
        return row;
      });
    },

    async delete(id: number, tx: Db = db): Promise<boolean> {
      return inTransaction(tx, async (t) => {
        const res = await t.deleteFrom('users').where('id', '=', id).executeTakeFirst();
        const deleted = Number(res.numDeletedRows) > 0;
        if (deleted) await announce(t, 'user.deleted', id);
        return deleted;
      });
    },
  };
}

const NO_DIALECT: Pick<Dialect, 'lockRows' | 'notify'> = { lockRows: (q) => q, notify: async () => undefined };

/**
 * Runs `write` on user `id` unless it would take away the last active admin: the active admins are read
 * (and on PostgreSQL locked) in the write's own transaction, so of two admins demoting each other at once,
 * the second sees the first's change and is refused.
 */
async function lastAdminGuarded<T>(
  db: Kysely<Database>,
  dialect: Pick<Dialect, 'lockRows'>,
  id: number,
  demotes: boolean,
  write: (tx: Db) => Promise<T>,
): Promise<T | typeof LAST_ADMIN> {
  if (!demotes) return write(db);
  return db.transaction().execute(async (tx) => {
    const admins = await dialect
      .lockRows(tx.selectFrom('users').select('id').where('role', '=', 'admin').where('status', '=', 'active'))
      .execute();
    if (admins.some((a) => a.id === id) && admins.length === 1) return LAST_ADMIN;
    return write(tx);
  });
}

/** Users as read: by id or name, the unique values taken, whether an admin is left, a page of them. */
function createUserReads(db: Kysely<Database>, paginator: Paginator, fast: FastStatements | null) {
  const byId = fast?.prepare<[number], UserRow>('select * from users where id = ?') ?? null;
  return {
    async findById(id: number, tx: Db = db): Promise<UserRow | undefined> {
      // Prepared on the embedded engine: every request with a token reads its user here (tokens.service.ts).
      if (tx === db && byId && fast!.usable()) return byId.get(id);
      return tx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async findByUsername(username: string, tx: Db = db): Promise<UserRow | undefined> {
      return tx.selectFrom('users').selectAll().where('username_lower', '=', username.toLowerCase()).executeTakeFirst();
    },

    /** Which of the given unique values are already held by another user. */
    findTaken: (username: string | undefined, email: string | undefined, exceptId: number | null, tx: Db = db) =>
      findTaken(tx, username, email, exceptId),

    /** Whether any active admin exists (the first-run hint, modules/instance). */
    async hasActiveAdmin(tx: Db = db): Promise<boolean> {
      const row = await tx
        .selectFrom('users')
        .select('id')
        .where('role', '=', 'admin')
        .where('status', '=', 'active')
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async list(
      filters: UserFilters,
      list: ResolvedList,
      tx: Db = db,
    ): Promise<{ rows: UserRow[]; total: number | null }> {
      let base = tx.selectFrom('users');
      if (filters.role) base = base.where('role', '=', filters.role);
      if (filters.status) base = base.where('status', '=', filters.status);
      const rows = await paginator.apply(base.selectAll('users'), list, 'users').execute();
      const total =
        list.mode === 'page'
          ? Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
          : null;
      return { rows, total };
    },
  };
}

/**
 * Plain rows in and out; every method takes an optional transaction. Each change writes its event to the outbox
 * (db/outbox.ts) in its transaction.
 */
export function createUsersRepository(
  db: Kysely<Database>,
  paginator: Paginator,
  dialect: Pick<Dialect, 'lockRows' | 'notify'> = NO_DIALECT,
  fast: FastStatements | null = null,
) {
  const unlessLastAdmin = <T>(id: number, demotes: boolean, write: (tx: Db) => Promise<T>) =>
    lastAdminGuarded(db, dialect, id, demotes, write);

  const repository = {
    ...createUserReads(db, paginator, fast),
    ...createUserWrites(db, dialect),

    /**
     * A rehash at the current cost (a login, tokens.service.ts): only if the hash is still the one that was
     * checked, so a password change that raced the login wins. Not a change of the representation: neither
     * `version` nor `updated_at` moves, and tokens stay valid.
     */
    async setPasswordHash(id: number, expectedHash: string, hash: string, tx: Db = db): Promise<void> {
      await tx
        .updateTable('users')
        .set({ password_hash: hash })
        .where('id', '=', id)
        .where('password_hash', '=', expectedHash)
        .execute();
    },

    /**
     * update(), refused with LAST_ADMIN when it would demote or suspend the last active admin; `audit`: the
     * entries the change writes in its transaction (a role or status change).
     */
    async updateKeepingAnAdmin(
      id: number,
      changes: UserChanges,
      expectedVersion: number | null,
      audit: readonly AuditEntry[] = [],
    ): Promise<UserRow | undefined | typeof LAST_ADMIN> {
      return unlessLastAdmin(id, !keepsAdmin(changes), (tx) =>
        repository.update(id, changes, expectedVersion, tx, audit),
      );
    },

    /** delete(), refused with LAST_ADMIN when the user is the last active admin. */
    async deleteKeepingAnAdmin(id: number): Promise<boolean | typeof LAST_ADMIN> {
      return unlessLastAdmin(id, true, (tx) => repository.delete(id, tx));
    },
  };
  return repository;
}
