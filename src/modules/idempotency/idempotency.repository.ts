import type { Kysely, Transaction } from 'kysely';
import type { Database, IdempotencyKeyRow } from '../../db/types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface KeyId {
  scope: string;
  key: string;
}

export interface NewLock extends KeyId {
  userId: number | null;
  fingerprint: string;
  lockId: string;
  now: number;
  expiresAt: number;
}

export interface ResponseToStore {
  status: number;
  headers: string;
  body: string;
}

export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>;

/**
 * SQL of the idempotency layer. Every write that changes who holds a key is conditional on the row's
 * current state (its lock_id, its expiry), so a write never acts on a row someone else has meanwhile taken.
 */
export function createIdempotencyRepository(db: Kysely<Database>) {
  return {
    /** Runs `work` in one database transaction (the seam through which the HTTP plugin gets its transaction). */
    transaction<T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
      return db.transaction().execute(work);
    },
    ...keyClaims(db),
    ...keyOutcomes(db),
  };
}

/** Who holds a key: claiming it, reading it, taking over a dead holder's lock, forgetting an expired key. */
function keyClaims(db: Kysely<Database>) {
  return {
    /**
     * Claims the key by inserting a locked row. The primary key decides: on a conflict nothing is inserted
     * and false comes back (ON CONFLICT DO NOTHING: the unique index arbitrates, and the losing statement
     * does not abort a transaction on PostgreSQL).
     */
    async insertLocked(l: NewLock): Promise<boolean> {
      const row = await db
        .insertInto('idempotency_keys')
        .values({
          scope: l.scope,
          idem_key: l.key,
          user_id: l.userId,
          fingerprint: l.fingerprint,
          lock_id: l.lockId,
          locked_at: l.now,
          response_status: null,
          response_headers: null,
          response_body: null,
          created_at: l.now,
          expires_at: l.expiresAt,
        })
        .onConflict((oc) => oc.columns(['scope', 'idem_key']).doNothing())
        .returning('scope')
        .executeTakeFirst();
      return row !== undefined;
    },

    async find(k: KeyId): Promise<IdempotencyKeyRow | undefined> {
      return db
        .selectFrom('idempotency_keys')
        .where('scope', '=', k.scope)
        .where('idem_key', '=', k.key)
        .selectAll()
        .executeTakeFirst();
    },

    /** Takes over a lock whose holder is presumed dead: only if it still holds the lock we saw. */
    async takeOver(k: KeyId, staleLockId: string, lockId: string, now: number, expiresAt: number): Promise<boolean> {
      const res = await db
        .updateTable('idempotency_keys')
        .set({ lock_id: lockId, locked_at: now, created_at: now, expires_at: expiresAt })
        .where('scope', '=', k.scope)
        .where('idem_key', '=', k.key)
        .where('lock_id', '=', staleLockId)
        .where('response_status', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },

    /** Deletes this key if it has expired (an expired key is forgotten, SPEC §5). */
    async deleteIfExpired(k: KeyId, now: number): Promise<void> {
      await db
        .deleteFrom('idempotency_keys')
        .where('scope', '=', k.scope)
        .where('idem_key', '=', k.key)
        .where('expires_at', '<=', now)
        .execute();
    },
  };
}

/** How a claim ends: its response stored, or the key released; and the purge of expired keys. */
function keyOutcomes(db: Kysely<Database>) {
  return {
    /** Stores the response and drops the lock, only while `lockId` still holds it. Runs in the work's transaction. */
    async complete(k: KeyId, lockId: string, response: ResponseToStore, tx: Db): Promise<boolean> {
      const res = await tx
        .updateTable('idempotency_keys')
        .set({
          lock_id: null,
          locked_at: null,
          response_status: response.status,
          response_headers: response.headers,
          response_body: response.body,
        })
        .where('scope', '=', k.scope)
        .where('idem_key', '=', k.key)
        .where('lock_id', '=', lockId)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },

    /** Forgets a claim whose request did not complete, so the key can be used again at once. */
    async release(k: KeyId, lockId: string): Promise<boolean> {
      const res = await db
        .deleteFrom('idempotency_keys')
        .where('scope', '=', k.scope)
        .where('idem_key', '=', k.key)
        .where('lock_id', '=', lockId)
        .where('response_status', 'is', null)
        .executeTakeFirst();
      return Number(res.numDeletedRows) === 1;
    },

    async purgeExpired(now: number): Promise<number> {
      const res = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}
