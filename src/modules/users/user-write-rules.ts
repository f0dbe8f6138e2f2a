import type { Dialect } from '../../db/dialect.js';
import type { UserRow } from '../../db/types.js';
import { AppError, type ErrorDetail } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { UsersRepository } from './users.repository.js';

// What both a new account (users.service.ts) and an edit of one (user-edits.ts) must respect.

export const userEtag = (row: Pick<UserRow, 'id' | 'version'>): string => `"user-${row.id}-v${row.version}"`;

/** SPEC §17: someone must stay able to administer the instance (and ADMIN_USERNAME's next start to succeed). */
export const lastAdmin = (field?: 'role' | 'status'): AppError =>
  new AppError(
    'LAST_ADMIN',
    'This is the last active admin: make another user an active admin first',
    field ? [{ field, message: 'would leave no active admin' }] : [],
  );

export type UniqueWrite = <T>(
  username: string | undefined,
  email: string | undefined,
  exceptId: number | null,
  write: () => Promise<T>,
) => Promise<T>;

const usernameOrEmailTaken = (taken: { username: boolean; email: boolean }): AppError => {
  const details: ErrorDetail[] = [];
  if (taken.username) details.push({ field: 'username', message: 'is already taken' });
  if (taken.email) details.push({ field: 'email', message: 'is already registered' });
  return new AppError('CONFLICT', 'A user with this username or e-mail already exists', details);
};

/** Only an admin may set role or status to anything but what they are (mass assignment, SPEC §3). */
export function assertAdministrativeFields(
  caller: Caller | null,
  current: { role: string; status: string },
  input: { role?: string; status?: string },
): void {
  if (isAdmin(caller)) return;
  const details: ErrorDetail[] = [];
  if (input.role !== undefined && input.role !== current.role)
    details.push({ field: 'role', message: 'only an admin may change it' });
  if (input.status !== undefined && input.status !== current.status)
    details.push({ field: 'status', message: 'only an admin may change it' });
  if (details.length) throw new AppError('FORBIDDEN', 'Only an admin may change role or status', details);
}

/** Friendly 409 with every taken field; the unique indexes stay the final word when two writes race. */
export function createUniquenessGuard(deps: {
  users: Pick<UsersRepository, 'findTaken'>;
  dialect: Pick<Dialect, 'isUniqueViolation' | 'uniqueViolationTarget'>;
}): UniqueWrite {
  const { users, dialect } = deps;
  return async (username, email, exceptId, write) => {
    const taken = await users.findTaken(username, email, exceptId);
    if (taken.username || taken.email) throw usernameOrEmailTaken(taken);
    try {
      return await write();
    } catch (err) {
      if (!dialect.isUniqueViolation(err)) throw err;
      const target = dialect.uniqueViolationTarget(err);
      throw usernameOrEmailTaken({
        username: target.includes('username'),
        email: target.includes('email') || !target.includes('username'),
      });
    }
  };
}
