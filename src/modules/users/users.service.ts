import type { Dialect } from '../../db/dialect.js';
import type { UserRow } from '../../db/types.js';
import { AppError, notFound } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { Registration } from '../../config.js';
import { isoTime } from '../../lib/common.schemas.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import type { PasswordHasher } from './password.js';
import type { UsersRepository } from './users.repository.js';
import { USER_SORT_COLUMNS, type User, type UserCreate, type UserListQueryT } from './users.schemas.js';
import { createUserEdits } from './user-edits.js';
import { assertAdministrativeFields, createUniquenessGuard, type UniqueWrite } from './user-write-rules.js';

export { userEtag } from './user-write-rules.js';

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    role: row.role,
    status: row.status,
    name: row.name,
    age: row.age,
    version: row.version,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

export type UsersService = ReturnType<typeof createUsersService>;

/** Sign-up, and an admin's new account. */
function createAccountCreation(deps: {
  users: Pick<UsersRepository, 'insert'>;
  passwords: Pick<PasswordHasher, 'hash'>;
  clock: Clock;
  registration: Registration;
  withUniqueness: UniqueWrite;
}) {
  const { users, passwords, clock, registration, withUniqueness } = deps;
  /** What a sign-up's account is: active at once only when registration is open. */
  const signUpStatus: UserRow['status'] = registration === 'open' ? 'active' : 'pending';
  return {
    /**
     * Sign-up, or an admin creating an account. Without an admin's credential REGISTRATION decides: closed
     * refuses, open makes the account active, approval leaves it pending. An admin's account is active unless
     * the admin asks for `pending` (SPEC §18), whatever REGISTRATION says. Nobody becomes an admin here without
     * an admin's credential, not even the first account while no admin exists: that one is made by the CLI
     * or ADMIN_USERNAME.
     */
    async create(input: UserCreate, caller: Caller | null): Promise<UserRow> {
      if (!isAdmin(caller)) {
        if (registration === 'closed')
          throw new AppError(
            'REGISTRATION_CLOSED',
            'Sign-up is closed on this instance: only an admin creates accounts',
          );
        assertAdministrativeFields(caller, { role: 'user', status: signUpStatus }, input);
      }
      const status = input.status ?? (isAdmin(caller) ? 'active' : signUpStatus);
      const passwordHash = await passwords.hash(input.password);
      const now = clock.now();
      return withUniqueness(input.username, input.email, null, () =>
        users.insert({
          username: input.username,
          username_lower: input.username.toLowerCase(),
          email: input.email,
          email_lower: input.email.toLowerCase(),
          password_hash: passwordHash,
          role: input.role ?? 'user',
          status,
          name: input.name ?? null,
          age: input.age ?? null,
          version: 1,
          created_at: now,
          updated_at: now,
        }),
      );
    },
  };
}

/** The admin ADMIN_USERNAME names, made at start-up. */
function createFirstAdmin(deps: {
  users: Pick<UsersRepository, 'insert' | 'findByUsername' | 'update'>;
  passwords: Pick<PasswordHasher, 'hash'>;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
}) {
  const { users, passwords, dialect, clock } = deps;
  return {
    /**
     * Makes sure the configured first admin exists (SPEC §4). Several instances may start at once: the
     * unique index decides, and a loser finds the winner's row. An existing non-admin account with that name
     * is never promoted (it could be a squatter): start-up fails instead.
     */
    async ensureAdmin(username: string, password: string): Promise<'created' | 'exists'> {
      const existing = await users.findByUsername(username);
      if (!existing) {
        const now = clock.now();
        const hash = await passwords.hash(password);
        try {
          await users.insert({
            username,
            username_lower: username.toLowerCase(),
            email: `${username.toLowerCase()}@admin.invalid`,
            email_lower: `${username.toLowerCase()}@admin.invalid`,
            password_hash: hash,
            role: 'admin',
            status: 'active',
            name: null,
            age: null,
            version: 1,
            created_at: now,
            updated_at: now,
          });
          return 'created';
        } catch (err) {
          if (!dialect.isUniqueViolation(err)) throw err;
        }
      }
      const row = existing ?? (await users.findByUsername(username));
      if (!row || row.role !== 'admin')
        throw new Error(
          `ADMIN_USERNAME=${username} names an existing account that is not an admin; refusing to promote it`,
        );
      if (row.status !== 'active') await users.update(row.id, { status: 'active', updated_at: clock.now() }, null);
      return 'exists';
    },
  };
}

function createUserReads(deps: { users: Pick<UsersRepository, 'findById' | 'list'>; paginator: Paginator }) {
  const { users, paginator } = deps;
  return {
    async get(id: number): Promise<UserRow> {
      const row = await users.findById(id);
      if (!row) throw notFound('User');
      return row;
    },

    async list(query: UserListQueryT, requestUrl: string, cursorOnly = false): Promise<PageResult<User>> {
      const filters = { role: query.role, status: query.status };
      const list = paginator.resolve(query, USER_SORT_COLUMNS, filters, cursorOnly);
      const { rows, total } = await users.list(filters, list);
      const sortValue = (r: UserRow): string | number => r[list.sortColumn as keyof UserRow] as string | number;
      return paginator.page(rows, list, total, requestUrl, toUser, sortValue);
    },
  };
}

export function createUsersService(deps: {
  users: UsersRepository;
  passwords: Pick<PasswordHasher, 'hash' | 'verify'>;
  dialect: Pick<Dialect, 'isUniqueViolation' | 'uniqueViolationTarget'>;
  clock: Clock;
  paginator: Paginator;
  /** REGISTRATION (SPEC §18): what a sign-up without an admin's credential gets; default approval */
  registration?: Registration;
}) {
  const withUniqueness = createUniquenessGuard(deps);
  const { create } = createAccountCreation({ ...deps, registration: deps.registration ?? 'approval', withUniqueness });
  const { ensureAdmin } = createFirstAdmin(deps);
  const { get, list } = createUserReads(deps);
  const { replace, patch, remove } = createUserEdits({ ...deps, withUniqueness });
  return { create, get, list, replace, patch, ensureAdmin, remove };
}
