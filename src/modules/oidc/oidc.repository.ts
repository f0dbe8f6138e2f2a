import type { Kysely, Transaction } from 'kysely';
import type { Database, UserIdentitiesTable } from '../../db/types.js';

type Db = Kysely<Database> | Transaction<Database>;

export type IdentitiesRepository = ReturnType<typeof createIdentitiesRepository>;

/** The (issuer, subject) → account links of single sign-on (migration 046). */
export function createIdentitiesRepository(db: Kysely<Database>) {
  return {
    async find(issuer: string, subject: string, tx: Db = db): Promise<UserIdentitiesTable | undefined> {
      return tx
        .selectFrom('user_identities')
        .selectAll()
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .executeTakeFirst();
    },

    /** Fails with a unique violation when the subject is linked already (two first sign-ins at once). */
    async insert(row: UserIdentitiesTable, tx: Db = db): Promise<void> {
      await tx.insertInto('user_identities').values(row).execute();
    },

    async touch(issuer: string, subject: string, at: number): Promise<void> {
      await db
        .updateTable('user_identities')
        .set({ last_sign_in_at: at })
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .execute();
    },
  };
}
