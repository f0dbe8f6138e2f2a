import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import { OUTBOX_RETENTION_MS, sweepOutbox } from '../../db/outbox.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';

/** How often events past their retention are swept. */
const SWEEP_EVERY_MS = 60 * 60_000;

/**
 * The outbox's upkeep (db/outbox.ts): events are written by every module in its own transactions and read by the
 * feeds (infra/outbox-feed.ts); this module's job drops those older than the retention (7 days), so the table
 * holds about a week of changes and no more. A consumer reads an event within seconds; SPEC §22's event stream
 * resumes from one within the retention.
 */
export function createOutboxModule(deps: { db: Kysely<Database>; clock: Clock; retentionMs?: number }) {
  const retentionMs = deps.retentionMs ?? OUTBOX_RETENTION_MS;
  return appModule({
    schemas: [],
    jobs: [
      {
        name: 'sweep-outbox',
        everyMs: SWEEP_EVERY_MS,
        run: () => sweepOutbox(deps.db, deps.clock.now() - retentionMs),
      },
    ],
  });
}
