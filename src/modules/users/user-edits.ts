import { auditActorOf, type AuditEntry } from '../../db/audit-log.js';
import type { UserRow } from '../../db/types.js';
import { AppError, notFound, validationError } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { assertIfMatch } from '../../lib/etag.js';
import type { PasswordHasher } from './password.js';
import { tokenRevocation } from './token-revocation.js';
import { LAST_ADMIN, type UserChanges, type UsersRepository } from './users.repository.js';
import type { UserPatch, UserReplace } from './users.schemas.js';
import { assertAdministrativeFields, lastAdmin, userEtag, type UniqueWrite } from './user-write-rules.js';

interface WriteOptions {
  caller: Caller;
  ifMatch?: string;
}

/** A user as read for a write, and the version the write is conditional on (null: unconditional). */
interface LoadedForWrite {
  row: UserRow;
  expected: number | null;
}

/** A password, role or status change revokes every token issued before it (SPEC §12; token-revocation.ts). */
function revokeEarlierTokens(row: UserRow, changes: UserChanges, now: number): void {
  const changed =
    changes.password_hash !== undefined ||
    (changes.role !== undefined && changes.role !== row.role) ||
    (changes.status !== undefined && changes.status !== row.status);
  if (changed) Object.assign(changes, tokenRevocation(row, now));
}

/** PUT's changes: every client-writable field; role/status stay unless sent (SPEC §3). */
function replacementOf(input: UserReplace): UserChanges {
  const changes: UserChanges = {
    username: input.username,
    username_lower: input.username.toLowerCase(),
    email: input.email,
    email_lower: input.email.toLowerCase(),
    name: input.name ?? null,
    age: input.age ?? null,
  };
  if (input.role !== undefined) changes.role = input.role;
  if (input.status !== undefined) changes.status = input.status;
  return changes;
}

/** PATCH's changes (JSON merge patch, RFC 7396): only the sent fields; null clears name or age. */
function mergePatchOf(input: UserPatch): UserChanges {
  const changes: UserChanges = {};
  if (input.username !== undefined)
    Object.assign(changes, { username: input.username, username_lower: input.username.toLowerCase() });
  if (input.email !== undefined) Object.assign(changes, { email: input.email, email_lower: input.email.toLowerCase() });
  if (input.name !== undefined) changes.name = input.name;
  if (input.age !== undefined) changes.age = input.age;
  if (input.role !== undefined) changes.role = input.role;
  if (input.status !== undefined) changes.status = input.status;
  return changes;
}

/** SPEC §23: a change of role or status is audited, in the change's transaction, with the values before and after. */
function roleAndStatusAudit(row: UserRow, changes: UserChanges, caller: Caller, at: number): AuditEntry[] {
  const entries: AuditEntry[] = [];
  const target = { type: 'user', id: row.id };
  const actor = auditActorOf(caller);
  if (changes.role !== undefined && changes.role !== row.role)
    entries.push({ action: 'user.role_changed', actor, target, details: { from: row.role, to: changes.role }, at });
  if (changes.status !== undefined && changes.status !== row.status)
    entries.push({
      action: 'user.status_changed',
      actor,
      target,
      details: { from: row.status, to: changes.status },
      at,
    });
  return entries;
}

/**
 * The optimistic concurrency of a user's writes: If-Match and the body's `version` are checked on the read and
 * again by the conditional update, so a change that lands in between is refused, never lost.
 */
function createVersionedUserWrites(deps: {
  users: Pick<UsersRepository, 'findById' | 'updateKeepingAnAdmin'>;
  clock: Clock;
}) {
  const { users, clock } = deps;
  return {
    async loadForWrite(id: number, opts: WriteOptions, bodyVersion: number | undefined): Promise<LoadedForWrite> {
      const row = await users.findById(id);
      if (!row) throw notFound('User');
      assertIfMatch(opts.ifMatch, userEtag(row));
      if (bodyVersion !== undefined && bodyVersion !== row.version) {
        throw new AppError('VERSION_CONFLICT', 'The user was changed since you read it', [
          { field: 'version', message: `the current version is ${row.version}` },
        ]);
      }
      return { row, expected: opts.ifMatch !== undefined || bodyVersion !== undefined ? row.version : null };
    },

    async applyUpdate(
      id: number,
      changes: UserChanges,
      expected: number | null,
      opts: WriteOptions,
      bodyVersion: number | undefined,
      before: UserRow,
    ): Promise<UserRow> {
      const audit = roleAndStatusAudit(before, changes, opts.caller, clock.now());
      const updated = await users.updateKeepingAnAdmin(id, { ...changes, updated_at: clock.now() }, expected, audit);
      if (updated === LAST_ADMIN)
        throw lastAdmin(changes.role !== undefined && changes.role !== 'admin' ? 'role' : 'status');
      if (updated) return updated;
      // Changed (or deleted) between our read and our write.
      const now = await users.findById(id);
      if (!now) throw notFound('User');
      if (opts.ifMatch !== undefined && bodyVersion === undefined) {
        throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [
          { field: 'If-Match', message: `the current ETag is ${userEtag(now)}` },
        ]);
      }
      throw new AppError('VERSION_CONFLICT', 'The user was changed since you read it', [
        { field: 'version', message: `the current version is ${now.version}` },
      ]);
    },
  };
}

/**
 * SPEC §12: changing one's own password needs the current one (a stolen token alone cannot take the
 * account over); an admin changing another user's does not.
 */
async function assertCurrentPassword(
  passwords: Pick<PasswordHasher, 'verify'>,
  caller: Caller,
  row: UserRow,
  input: { password?: string; currentPassword?: string },
): Promise<void> {
  if (input.password === undefined || caller.userId !== row.id) return;
  if (input.currentPassword === undefined) {
    throw validationError(
      [{ field: 'currentPassword', message: 'is required to change your own password' }],
      'Request body is invalid',
    );
  }
  if (!(await passwords.verify(input.currentPassword, row.password_hash))) {
    throw new AppError('FORBIDDEN', 'The current password is not correct', [
      { field: 'currentPassword', message: 'does not match your current password' },
    ]);
  }
}

/** PUT, PATCH and DELETE of a user. */
export function createUserEdits(deps: {
  users: Pick<UsersRepository, 'findById' | 'updateKeepingAnAdmin' | 'deleteKeepingAnAdmin'>;
  passwords: Pick<PasswordHasher, 'hash' | 'verify'>;
  clock: Clock;
  withUniqueness: UniqueWrite;
}) {
  const { users, passwords, clock, withUniqueness } = deps;
  const { loadForWrite, applyUpdate } = createVersionedUserWrites({ users, clock });

  /** What PUT and PATCH share once their changes are built: the password, the tokens it revokes, uniqueness. */
  async function saveChanges(
    id: number,
    loaded: LoadedForWrite,
    changes: UserChanges,
    input: UserPatch,
    opts: WriteOptions,
  ): Promise<UserRow> {
    await assertCurrentPassword(passwords, opts.caller, loaded.row, input);
    if (input.password !== undefined) changes.password_hash = await passwords.hash(input.password);
    revokeEarlierTokens(loaded.row, changes, clock.now());
    return withUniqueness(input.username, input.email, id, () =>
      applyUpdate(id, changes, loaded.expected, opts, input.version, loaded.row),
    );
  }

  return {
    /** PUT: a full replacement of the client-writable fields; role/status stay unless sent (SPEC §3). */
    async replace(id: number, input: UserReplace, opts: WriteOptions): Promise<UserRow> {
      const loaded = await loadForWrite(id, opts, input.version);
      assertAdministrativeFields(opts.caller, loaded.row, input);
      return saveChanges(id, loaded, replacementOf(input), input, opts);
    },

    /** PATCH as JSON merge patch (RFC 7396): only the sent fields change; null clears name or age. */
    async patch(id: number, input: UserPatch, opts: WriteOptions): Promise<UserRow> {
      const loaded = await loadForWrite(id, opts, input.version);
      assertAdministrativeFields(opts.caller, loaded.row, input);
      return saveChanges(id, loaded, mergePatchOf(input), input, opts);
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
