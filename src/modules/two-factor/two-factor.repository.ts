import type { Kysely } from 'kysely';
import { recordAudit, type AuditEntry } from '../../db/audit-log.js';
import { inTransaction } from '../../db/outbox.js';
import type { Database, UserTotpRow } from '../../db/types.js';

export type TwoFactorRepository = ReturnType<typeof createTwoFactorRepository>;

/**
 * `user_totp` and `user_recovery_codes` (migration 045). A code is used up by one conditional UPDATE (the step
 * moves forward only, a recovery code's `used_at` is set only while null): of two requests with the same code,
 * racing on any number of instances, exactly one sees its row changed.
 */
export function createTwoFactorRepository(db: Kysely<Database>) {
  return { ...twoFactorReads(db), ...codeUses(db), ...setupWrites(db) };
}

function twoFactorReads(db: Kysely<Database>) {
  return {
    async find(userId: number): Promise<UserTotpRow | undefined> {
      return db.selectFrom('user_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
    },

    async unusedRecoveryCodes(userId: number): Promise<number> {
      const { n } = await db
        .selectFrom('user_recovery_codes')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(n);
    },

    async isEnabled(userId: number): Promise<boolean> {
      const row = await db
        .selectFrom('user_totp')
        .select('user_id')
        .where('user_id', '=', userId)
        .where('enabled_at', 'is not', null)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

function setupWrites(db: Kysely<Database>) {
  return {
    /** A new secret waiting for its confirmation (replacing an unconfirmed one); false when 2FA is on already. */
    async startSetup(userId: number, sealed: string, now: number): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const current = await tx
          .selectFrom('user_totp')
          .select('enabled_at')
          .where('user_id', '=', userId)
          .executeTakeFirst();
        if (current?.enabled_at != null) return false;
        await tx.deleteFrom('user_totp').where('user_id', '=', userId).execute();
        await tx
          .insertInto('user_totp')
          .values({ user_id: userId, secret: sealed, enabled_at: null, last_step: null, created_at: now })
          .execute();
        return true;
      });
    },

    /** Turns the waiting set-up on with the step of its first code and these recovery codes; false: it lost a race. */
    async enable(userId: number, step: number, codeHashes: string[], now: number, audit: AuditEntry): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const res = await tx
          .updateTable('user_totp')
          .set({ enabled_at: now, last_step: step })
          .where('user_id', '=', userId)
          .where('enabled_at', 'is', null)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) !== 1) return false;
        await tx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
        await tx
          .insertInto('user_recovery_codes')
          .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null })))
          .execute();
        await recordAudit(tx, audit);
        return true;
      });
    },

    /** Turns it off (secret and recovery codes gone) with its audit entry; false when it was not on. */
    async disable(userId: number, audit: AuditEntry, tx: Kysely<Database> = db): Promise<boolean> {
      return inTransaction(tx, async (t) => {
        const res = await t.deleteFrom('user_totp').where('user_id', '=', userId).executeTakeFirst();
        await t.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
        const was = Number(res.numDeletedRows) > 0;
        if (was) await recordAudit(t, audit);
        return was;
      });
    },
  };
}

function codeUses(db: Kysely<Database>) {
  return {
    /** Uses up the code of `step`: true when no code of this step or a later one was accepted before. */
    async useStep(userId: number, step: number): Promise<boolean> {
      const res = await db
        .updateTable('user_totp')
        .set({ last_step: step })
        .where('user_id', '=', userId)
        .where('enabled_at', 'is not', null)
        .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },

    /** Uses up a recovery code: true once per code. */
    async useRecoveryCode(userId: number, codeHash: string, now: number): Promise<boolean> {
      const res = await db
        .updateTable('user_recovery_codes')
        .set({ used_at: now })
        .where('user_id', '=', userId)
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) >= 1;
    },
  };
}
