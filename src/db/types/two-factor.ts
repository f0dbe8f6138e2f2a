import type { Generated, Selectable } from 'kysely';

/** A user's TOTP set-up (migration 045, modules/two-factor): the secret encrypted, null `enabled_at` until confirmed. */
export interface UserTotpTable {
  user_id: number;
  /** AES-256-GCM: base64url of nonce, tag and ciphertext (modules/two-factor/totp-secret.ts) */
  secret: string;
  enabled_at: number | null;
  /** the last time step whose code was accepted: a code of it or before is refused (a replay) */
  last_step: number | null;
  created_at: number;
}

export interface UserRecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  /** hex SHA-256 of the normalised code */
  code_hash: string;
  used_at: number | null;
}

/** The audit log (migration 045, db/audit-log.ts). */
export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  /** null: the CLI */
  actor_id: number | null;
  /** the actor's username when written, or `cli` */
  actor: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  /** JSON object */
  details: string | null;
}

export type UserTotpRow = Selectable<UserTotpTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
