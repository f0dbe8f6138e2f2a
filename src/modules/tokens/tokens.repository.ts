import type { Kysely } from 'kysely';
import type { FastStatements } from '../../db/database.js';
import { recordAudit, type AuditEntry } from '../../db/audit-log.js';
import type { Database, TokensTable } from '../../db/types.js';

export type TokensRepository = ReturnType<typeof createTokensRepository>;

/** Issued tokens (owner lookup for revocation). */
export function createTokensRepository(db: Kysely<Database>) {
  return {
    /** The token's row and, in the same transaction, its sign-in's audit entry. */
    async insert(row: TokensTable, audit?: AuditEntry): Promise<void> {
      if (!audit) {
        await db.insertInto('tokens').values(row).execute();
        return;
      }
      await db.transaction().execute(async (tx) => {
        await tx.insertInto('tokens').values(row).execute();
        await recordAudit(tx, audit);
      });
    },
    /** A sign-in that failed: nothing else is written, the entry is its own. */
    async recordSignIn(audit: AuditEntry): Promise<void> {
      await recordAudit(db, audit);
    },
    async findByJti(jti: string): Promise<TokensTable | undefined> {
      return db.selectFrom('tokens').selectAll().where('jti', '=', jti).executeTakeFirst();
    },
    async purgeExpired(now: number): Promise<number> {
      const res = await db.deleteFrom('tokens').where('expires_at', '<', now).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}

/**
 * The deny list of revoked `jti`s, each kept until its token's `exp`. Behind an interface so that the
 * scale-out setup can keep it in Redis.
 */
export interface TokenDenyList {
  isRevoked(jti: string): Promise<boolean>;
  /** Adds the jti; false when it was already on the list. */
  revoke(jti: string, expiresAt: number): Promise<boolean>;
  purgeExpired(now: number): Promise<number>;
}

export function createSqlDenyList(db: Kysely<Database>, fast: FastStatements | null = null): TokenDenyList {
  // Prepared on the embedded engine: every request with a token asks (tokens.service.ts).
  const revoked = fast?.prepare<[string], { jti: string }>('select jti from revoked_tokens where jti = ?') ?? null;
  return {
    async isRevoked(jti) {
      if (revoked && fast!.usable()) return revoked.get(jti) !== undefined;
      const row = await db.selectFrom('revoked_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
      return row !== undefined;
    },
    async revoke(jti, expiresAt) {
      const res = await db
        .insertInto('revoked_tokens')
        .values({ jti, expires_at: expiresAt })
        .onConflict((oc) => oc.column('jti').doNothing())
        .executeTakeFirst();
      return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
    },
    async purgeExpired(now) {
      const res = await db.deleteFrom('revoked_tokens').where('expires_at', '<', now).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}
