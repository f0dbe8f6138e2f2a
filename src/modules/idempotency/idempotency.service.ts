import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database, IdempotencyKeyRow } from '../../db/types.js';
import { AppError } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import type { ClaimOutcome, ClaimRequest, IdempotencyClaim, StoredResponse } from '../../plugins/idempotency.js';
import type { IdempotencyRepository } from './idempotency.repository.js';

/** A request that died while holding a key gives it up after this long (Brandur uses 90 s, Stripe ~60 s). */
export const DEFAULT_LOCK_TIMEOUT_MS = 60_000;
/** How long a client is asked to wait before retrying a key that is in flight. */
const RETRY_AFTER_SECONDS = 1;
/** A claim races at most a release or an expiry per attempt; three attempts settle any interleaving. */
const CLAIM_ATTEMPTS = 3;

const inUse = (): AppError =>
  new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still in progress; retry later', [], {
    'Retry-After': String(RETRY_AFTER_SECONDS),
  });

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;

interface ClaimDeps {
  repo: IdempotencyRepository;
  clock: Clock;
  ttlMs: number;
  lockTimeoutMs: number;
}

/** Idempotency keys in the database: the port plugins/idempotency.ts needs (IdempotencyKeys), and the purge. */
export function createIdempotencyService(deps: {
  repo: IdempotencyRepository;
  clock: Clock;
  ttlSeconds: number;
  lockTimeoutMs?: number;
}) {
  const { repo, clock } = deps;
  const claimDeps: ClaimDeps = {
    repo,
    clock,
    ttlMs: deps.ttlSeconds * 1000,
    lockTimeoutMs: deps.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
  };

  return {
    /** Claims the key for this request, or says what to answer instead (claimKey). */
    claim: (req: ClaimRequest): Promise<ClaimOutcome> => claimKey(claimDeps, req),

    /**
     * Stores the response in the caller's transaction, the one that did the work, so that the work and its
     * stored result commit together or not at all. If the lock was lost meanwhile (this request outlived the
     * lock timeout and another took the key over), it throws and the transaction, work included, rolls back.
     */
    async complete(claim: IdempotencyClaim, response: StoredResponse, tx: Transaction<Database>): Promise<void> {
      const stored = {
        status: response.status,
        headers: JSON.stringify(response.headers),
        body: JSON.stringify(response.body ?? null),
      };
      if (!(await repo.complete(claim, claim.lockId, stored, tx))) throw inUse();
    },

    /**
     * Does a claimed request's work and stores what it answers in one transaction (complete): the work and its
     * stored result commit together or not at all. `work` runs its writes with `tx`.
     */
    async completeWith(
      claim: IdempotencyClaim,
      work: (tx: Transaction<Database>) => Promise<StoredResponse>,
    ): Promise<StoredResponse> {
      return repo.transaction(async (tx) => {
        const response = await work(tx);
        await this.complete(claim, response, tx);
        return response;
      });
    },

    /** Gives the key up after a request that did not complete; its work was rolled back, so a retry is safe. */
    async release(claim: IdempotencyClaim): Promise<void> {
      await repo.release(claim, claim.lockId);
    },

    /** Deletes expired keys (the background purge); returns how many. */
    async purgeExpired(): Promise<number> {
      return repo.purgeExpired(clock.now());
    },
  };
}

/**
 * Claims the key for this request, or says what to answer instead. Never check-then-insert: the INSERT of a
 * locked row is the claim, and the primary key lets only one concurrent INSERT win. A loser reads the row:
 * another request's body → 422, a stored response → replay, a live lock → 409, a lock older than the timeout →
 * taken over with a conditional UPDATE (again only one taker wins).
 */
async function claimKey({ repo, clock, ttlMs, lockTimeoutMs }: ClaimDeps, req: ClaimRequest): Promise<ClaimOutcome> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt += 1) {
    const now = clock.now();
    const lockId = randomUUID();
    const claim = { scope: req.scope, key: req.key, lockId };
    if (await repo.insertLocked({ ...req, lockId, now, expiresAt: now + ttlMs })) return { kind: 'claimed', claim };

    const row = await repo.find(req);
    if (!row) continue; // released between our INSERT and our SELECT
    if (row.expires_at <= now) {
      await repo.deleteIfExpired(req, now);
      continue;
    }
    if (row.fingerprint !== req.fingerprint) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used for a different request', [
        { field: 'Idempotency-Key', message: 'was used with another method, path or body; use a new key' },
      ]);
    }
    if (row.response_status !== null) return replayOf(row);
    if (row.lock_id === null || row.locked_at === null || row.locked_at + lockTimeoutMs > now) throw inUse();
    if (await repo.takeOver(req, row.lock_id, lockId, now, now + ttlMs)) return { kind: 'claimed', claim };
  }
  throw inUse();
}

const replayOf = (row: IdempotencyKeyRow): ClaimOutcome => ({
  kind: 'replay',
  response: {
    status: row.response_status!,
    headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>,
    body: JSON.parse(row.response_body ?? 'null') as unknown,
  },
});
