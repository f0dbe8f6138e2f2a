import type { Dialect } from '../../db/dialect.js';
import type { UserRow, UserUpdate } from '../../db/types.js';
import { AppError, notFound, validationError, type ErrorDetail } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { Registration } from '../../config.js';
import { isoTime } from '../../lib/common.schemas.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import { assertIfMatch } from '../../lib/etag.js';
import type { PasswordHasher } from './password.js';
import { LAST_ADMIN, type UsersRepository } from './users.repository.js';
import { USER_SORT_COLUMNS, type User, type UserCreate, type UserListQueryT, type UserPatch, type UserReplace } from './users.schemas.js';

export const userEtag = (row: Pick<UserRow, 'id' | 'version'>): string => `"user-${row.id}-v${row.version}"`;

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

/** SPEC §17: someone must stay able to administer the instance (and ADMIN_USERNAME's next start to succeed). */
const lastAdmin = (field?: 'role' | 'status'): AppError =>
  new AppError('LAST_ADMIN', 'This is the last active admin: make another user an active admin first', field ? [{ field, message: 'would leave no active admin' }] : []);

interface WriteOptions {
  caller: Caller;
  ifMatch?: string;
}

export type UsersService = ReturnType<typeof createUsersService>;

export function createUsersService(deps: {
  users: UsersRepository;
  passwords: Pick<PasswordHasher, 'hash' | 'verify'>;
  dialect: Pick<Dialect, 'isUniqueViolation' | 'uniqueViolationTarget'>;
  clock: Clock;
  paginator: Paginator;
  /** REGISTRATION (SPEC §18): what a sign-up without an admin's credential gets; default approval */
  registration?: Registration;
}) {
  const { users, passwords, dialect, clock, paginator } = deps;
  const registration = deps.registration ?? 'approval';
  /** What a sign-up's account is: active at once only when registration is open. */
  const signUpStatus: UserRow['status'] = registration === 'open' ? 'active' : 'pending';

  const conflict = (taken: { username: boolean; email: boolean }): AppError => {
    const details: ErrorDetail[] = [];
    if (taken.username) details.push({ field: 'username', message: 'is already taken' });
    if (taken.email) details.push({ field: 'email', message: 'is already registered' });
    return new AppError('CONFLICT', 'A user with this username or e-mail already exists', details);
  };

  /** Friendly 409 with every taken field; the unique indexes stay the final word when two writes race. */
  async function withUniqueness<T>(username: string | undefined, email: string | undefined, exceptId: number | null, write: () => Promise<T>): Promise<T> {
    const taken = await users.findTaken(username, email, exceptId);
    if (taken.username || taken.email) throw conflict(taken);
    try {
      return await write();
    } catch (err) {
      if (!dialect.isUniqueViolation(err)) throw err;
      const target = dialect.uniqueViolationTarget(err);
      throw conflict({ username: target.includes('username'), email: target.includes('email') || !target.includes('username') });
    }
  }

  /** Only an admin may set role or status to anything but what they are (mass assignment, SPEC §3). */
  function assertAdministrativeFields(caller: Caller | null, current: { role: string; status: string }, input: { role?: string; status?: string }): void {
    if (isAdmin(caller)) return;
    const details: ErrorDetail[] = [];
    if (input.role !== undefined && input.role !== current.role) details.push({ field: 'role', message: 'only an admin may change it' });
    if (input.status !== undefined && input.status !== current.status) details.push({ field: 'status', message: 'only an admin may change it' });
    if (details.length) throw new AppError('FORBIDDEN', 'Only an admin may change role or status', details);
  }

  /**
   * SPEC §12: changing one's own password needs the current one (a stolen token alone cannot take the
   * account over); an admin changing another user's does not.
   */
  async function assertCurrentPassword(caller: Caller, row: UserRow, input: { password?: string; currentPassword?: string }): Promise<void> {
    if (input.password === undefined || caller.userId !== row.id) return;
    if (input.currentPassword === undefined) {
      throw validationError([{ field: 'currentPassword', message: 'is required to change your own password' }], 'Request body is invalid');
    }
    if (!(await passwords.verify(input.currentPassword, row.password_hash))) {
      throw new AppError('FORBIDDEN', 'The current password is not correct', [{ field: 'currentPassword', message: 'does not match your current password' }]);
    }
  }

  /**
   * A password, role or status change revokes every token issued before it (SPEC §12): tokens are valid from
   * the next whole second on (JWT `iat` is in seconds; tokens.service.ts issues new ones from that second).
   */
  function revokeEarlierTokens(row: UserRow, changes: UserUpdate): void {
    const changed = changes.password_hash !== undefined || (changes.role !== undefined && changes.role !== row.role) || (changes.status !== undefined && changes.status !== row.status);
    if (changed) changes.tokens_valid_after = Math.ceil((clock.now() + 1) / 1000) * 1000;
  }

  async function loadForWrite(id: number, opts: WriteOptions, bodyVersion: number | undefined): Promise<{ row: UserRow; expected: number | null }> {
    const row = await users.findById(id);
    if (!row) throw notFound('User');
    assertIfMatch(opts.ifMatch, userEtag(row));
    if (bodyVersion !== undefined && bodyVersion !== row.version) {
      throw new AppError('VERSION_CONFLICT', 'The user was changed since you read it', [{ field: 'version', message: `the current version is ${row.version}` }]);
    }
    return { row, expected: opts.ifMatch !== undefined || bodyVersion !== undefined ? row.version : null };
  }

  async function applyUpdate(id: number, changes: UserUpdate, expected: number | null, opts: WriteOptions, bodyVersion: number | undefined): Promise<UserRow> {
    const updated = await users.updateKeepingAnAdmin(id, { ...changes, updated_at: clock.now() }, expected);
    if (updated === LAST_ADMIN) throw lastAdmin(changes.role !== undefined && changes.role !== 'admin' ? 'role' : 'status');
    if (updated) return updated;
    // Changed (or deleted) between our read and our write.
    const now = await users.findById(id);
    if (!now) throw notFound('User');
    if (opts.ifMatch !== undefined && bodyVersion === undefined) {
      throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [{ field: 'If-Match', message: `the current ETag is ${userEtag(now)}` }]);
    }
    throw new AppError('VERSION_CONFLICT', 'The user was changed since you read it', [{ field: 'version', message: `the current version is ${now.version}` }]);
  }

  return {
    /**
     * Sign-up, or an admin creating an account. Without an admin's credential REGISTRATION decides: closed
     * refuses, open makes the account active, approval leaves it pending. Nobody becomes an admin here without
     * an admin's credential, not even the first account while no admin exists: that one is made by the CLI
     * or ADMIN_USERNAME.
     */
    async create(input: UserCreate, caller: Caller | null): Promise<UserRow> {
      if (!isAdmin(caller)) {
        if (registration === 'closed') throw new AppError('REGISTRATION_CLOSED', 'Sign-up is closed on this instance: only an admin creates accounts');
        assertAdministrativeFields(caller, { role: 'user', status: signUpStatus }, input);
      }
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
          status: input.status ?? signUpStatus,
          name: input.name ?? null,
          age: input.age ?? null,
          version: 1,
          created_at: now,
          updated_at: now,
        }),
      );
    },

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

    /** PUT: a full replacement of the client-writable fields; role/status stay unless sent (SPEC §3). */
    async replace(id: number, input: UserReplace, opts: WriteOptions): Promise<UserRow> {
      const { row, expected } = await loadForWrite(id, opts, input.version);
      assertAdministrativeFields(opts.caller, row, input);
      const changes: UserUpdate = {
        username: input.username,
        username_lower: input.username.toLowerCase(),
        email: input.email,
        email_lower: input.email.toLowerCase(),
        name: input.name ?? null,
        age: input.age ?? null,
      };
      if (input.role !== undefined) changes.role = input.role;
      if (input.status !== undefined) changes.status = input.status;
      await assertCurrentPassword(opts.caller, row, input);
      if (input.password !== undefined) changes.password_hash = await passwords.hash(input.password);
      revokeEarlierTokens(row, changes);
      return withUniqueness(input.username, input.email, id, () => applyUpdate(id, changes, expected, opts, input.version));
    },

    /** PATCH as JSON merge patch (RFC 7396): only the sent fields change; null clears name or age. */
    async patch(id: number, input: UserPatch, opts: WriteOptions): Promise<UserRow> {
      const { row, expected } = await loadForWrite(id, opts, input.version);
      assertAdministrativeFields(opts.caller, row, input);
      const changes: UserUpdate = {};
      if (input.username !== undefined) Object.assign(changes, { username: input.username, username_lower: input.username.toLowerCase() });
      if (input.email !== undefined) Object.assign(changes, { email: input.email, email_lower: input.email.toLowerCase() });
      if (input.name !== undefined) changes.name = input.name;
      if (input.age !== undefined) changes.age = input.age;
      if (input.role !== undefined) changes.role = input.role;
      if (input.status !== undefined) changes.status = input.status;
      await assertCurrentPassword(opts.caller, row, input);
      if (input.password !== undefined) changes.password_hash = await passwords.hash(input.password);
      revokeEarlierTokens(row, changes);
      return withUniqueness(input.username, input.email, id, () => applyUpdate(id, changes, expected, opts, input.version));
    },

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
            username, username_lower: username.toLowerCase(), email: `${username.toLowerCase()}@admin.invalid`,
            email_lower: `${username.toLowerCase()}@admin.invalid`, password_hash: hash, role: 'admin', status: 'active',
            name: null, age: null, version: 1, created_at: now, updated_at: now,
          });
          return 'created';
        } catch (err) {
          if (!dialect.isUniqueViolation(err)) throw err;
        }
      }
      const row = existing ?? (await users.findByUsername(username));
      if (!row || row.role !== 'admin') throw new Error(`ADMIN_USERNAME=${username} names an existing account that is not an admin; refusing to promote it`);
      if (row.status !== 'active') await users.update(row.id, { status: 'active', updated_at: clock.now() }, null);
      return 'exists';
    },

    async remove(id: number, ifMatch: string | undefined): Promise<void> {
      const row = await users.findById(id);
      if (!row) throw notFound('User');
      assertIfMatch(ifMatch, userEtag(row));
      const deleted = await users.deleteKeepingAnAdmin(id);
      if (deleted === LAST_ADMIN) throw lastAdmin();
      if (!deleted) throw notFound('User');
    },
  };
}
