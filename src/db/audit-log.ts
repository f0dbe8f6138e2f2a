import type { Kysely } from 'kysely';
import type { Database } from './types.js';

/**
 * The audit log (SPEC §23, migration 045): who did what, written by the action's own transaction, so an entry
 * exists if and only if its action committed (a rolled-back role change leaves no entry). It sits in db/, next
 * to the outbox, so that every module and the CLI write it without depending on one another; the audit module
 * (modules/audit) reads it and sweeps it.
 *
 * Why a table of its own rather than a consumer of the outbox: the outbox holds what changed, for machines, and
 * is kept 7 days; the audit log holds who did it and from where (actor, address), including what changes no
 * data at all (a failed sign-in, a backup), and is kept a year. A consumer would have to carry the actor and
 * address through every event and could lag or lose its place; a row written in the same transaction cannot.
 */
export type AuditAction =
  | 'auth.sign_in'
  | 'auth.sign_in_failed'
  | 'auth.totp_enabled'
  | 'auth.totp_disabled'
  | 'user.role_changed'
  | 'user.status_changed'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'webhook.created'
  | 'webhook.deleted'
  | 'domain.added'
  | 'domain.verified'
  | 'domain.removed'
  | 'link.disabled'
  | 'import.started'
  | 'backup.created'
  | 'backup.restored';

export const AUDIT_ACTIONS: readonly AuditAction[] = [
  'auth.sign_in',
  'auth.sign_in_failed',
  'auth.totp_enabled',
  'auth.totp_disabled',
  'user.role_changed',
  'user.status_changed',
  'api_key.created',
  'api_key.revoked',
  'webhook.created',
  'webhook.deleted',
  'domain.added',
  'domain.verified',
  'domain.removed',
  'link.disabled',
  'import.started',
  'backup.created',
  'backup.restored',
];

/** Who acted: a user (by id), the `ferry` CLI, or nobody known (a failed sign-in of an unknown name). */
export type AuditActor = { userId: number; ip?: string | null } | 'cli' | null;

export interface AuditEntry {
  action: AuditAction;
  actor: AuditActor;
  target?: { type: string; id: string | number } | null;
  /** the client's address; defaults to the actor's */
  ip?: string | null;
  details?: Record<string, unknown>;
  /** epoch ms; defaults to now */
  at?: number;
}

/**
 * The actor of a request's caller (lib/caller.ts carries the client's address as `ip`). User id 0 is no account:
 * it is the CLI's operator (cli/services.ts OPERATOR), recorded as `cli`.
 */
export const auditActorOf = (caller: { userId: number; ip?: string | null } | null | undefined): AuditActor =>
  !caller ? null : caller.userId === 0 ? 'cli' : { userId: caller.userId, ip: caller.ip ?? null };

/**
 * Writes the entries in the caller's transaction (pass the transaction the action runs in). The actor's
 * username is read in the same statement, so the entry keeps it after the account is renamed or deleted.
 */
export async function recordAudit(tx: Kysely<Database>, ...entries: AuditEntry[]): Promise<void> {
  for (const e of entries) {
    const actorId = e.actor && e.actor !== 'cli' ? e.actor.userId : null;
    const ip = e.ip !== undefined ? e.ip : e.actor && e.actor !== 'cli' ? (e.actor.ip ?? null) : null;
    await tx
      .insertInto('audit_log')
      .values((eb) => ({
        at: e.at ?? Date.now(),
        actor_id: actorId,
        actor:
          e.actor === 'cli'
            ? eb.val('cli')
            : actorId === null
              ? eb.val(null)
              : eb.selectFrom('users').select('username').where('id', '=', actorId),
        action: e.action,
        target_type: e.target?.type ?? null,
        target_id: e.target ? String(e.target.id) : null,
        ip: ip === null ? null : ip.slice(0, 64),
        details: e.details ? JSON.stringify(e.details) : null,
      }))
      .execute();
  }
}

/** Deletes the entries from before `before`, a batch at a time (each its own short statement); how many. */
export async function sweepAuditLog(db: Kysely<Database>, before: number, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const res = await db
      .deleteFrom('audit_log')
      .where('id', 'in', (eb) =>
        eb.selectFrom('audit_log').select('id').where('at', '<', before).orderBy('at').limit(batch),
      )
      .executeTakeFirst();
    const n = Number(res.numDeletedRows);
    total += n;
    if (n < batch) return total;
  }
}
