import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { createIdempotencyRepository } from './idempotency.repository.js';
import { createIdempotencyService } from './idempotency.service.js';

const PURGE_EVERY_MS = 5 * 60_000;

/** Idempotency keys: the service the HTTP plugin (plugins/idempotency.ts) uses, and the purge of expired keys. */
export function createIdempotencyModule(deps: {
  db: Kysely<Database>;
  clock: Clock;
  ttlSeconds: number;
  lockTimeoutMs: number;
}) {
  const idempotency = createIdempotencyService({
    repo: createIdempotencyRepository(deps.db),
    clock: deps.clock,
    ttlSeconds: deps.ttlSeconds,
    lockTimeoutMs: deps.lockTimeoutMs,
  });
  return appModule({
    idempotency,
    schemas: [],
    jobs: [{ name: 'purge-expired-idempotency-keys', everyMs: PURGE_EVERY_MS, run: () => idempotency.purgeExpired() }],
  });
}
