import type { Kysely } from 'kysely';
import type { Dialect } from '../../../db/dialect.js';
import type { Database } from '../../../db/types.js';
import type { ClickEvent } from '../event/click-event.js';
import type { ClickWriter } from './click-writer.js';

/** Keys per lookup: far below PostgreSQL's 65,535 bound parameters. */
const LOOKUP_CHUNK = 1_000;
const ATTEMPTS = 3;

/**
 * Exactly-once on top of at-least-once: the Redis stream redelivers an entry whose consumer died between its
 * commit and its XACK (or that another consumer claimed while the first was still writing), and a click
 * whose XADD timed out may have reached both the stream and the in-process fallback. Every such copy
 * carries the visit's `key`.
 *
 * The guard is the partial unique index on `clicks (click_key, clicked_at)` (migration 005), inside the
 * one transaction that writes the records, the counters and the rollups: a copy that races the original
 * makes that transaction fail whole, so nothing of it is counted. Before writing, the keys that are already
 * recorded are filtered out (one indexed lookup per batch, pruned to the batch's months), so a replay is
 * acknowledged without a failure; after a lost race the batch is filtered and written again.
 *
 * Why the click table itself rather than a separate processed-ids table: the record is the proof, it is
 * already written in that transaction, and a separate table would need a second index write per click and
 * its own expiry job. Its cost is the index, and only for keyed clicks (measured in docs/deployment.md).
 *
 * The PostgreSQL set writer (pg-set-writer.ts) skips the recorded keys itself (`skipsRecordedKeys`): its insert
 * leaves them to the same index (`on conflict … do nothing`), which also waits out a copy being written by
 * another worker instead of failing the batch.
 */
export function createReplaySafeClickWriter(deps: {
  db: Kysely<Database>;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  writer: ClickWriter;
}): ClickWriter {
  const { db, dialect, writer } = deps;

  async function recordedKeys(batch: readonly ClickEvent[]): Promise<Set<string>> {
    const known = new Set<string>();
    const keyed = batch.filter((e) => e.key !== undefined);
    for (let i = 0; i < keyed.length; i += LOOKUP_CHUNK) {
      const part = keyed.slice(i, i + LOOKUP_CHUNK);
      let from = Number.POSITIVE_INFINITY;
      let to = Number.NEGATIVE_INFINITY;
      for (const e of part) {
        from = Math.min(from, e.clickedAt);
        to = Math.max(to, e.clickedAt);
      }
      const rows = await db
        .selectFrom('clicks')
        .select('click_key')
        .where(
          'click_key',
          'in',
          part.map((e) => e.key!),
        )
        .where('clicked_at', '>=', from)
        .where('clicked_at', '<=', to)
        .execute();
      for (const r of rows) if (r.click_key) known.add(r.click_key);
    }
    return known;
  }

  /** The batch without recorded keys (unless the writer leaves them out itself), each key once. */
  async function unrecorded(batch: readonly ClickEvent[]): Promise<ClickEvent[]> {
    const known = writer.skipsRecordedKeys ? new Set<string>() : await recordedKeys(batch);
    return batch.filter((e) => {
      if (e.key === undefined) return true;
      if (known.has(e.key)) return false;
      known.add(e.key);
      return true;
    });
  }

  return {
    async write(batch) {
      for (let attempt = 1; ; attempt += 1) {
        const fresh = await unrecorded(batch);
        if (fresh.length === 0) return;
        try {
          await writer.write(fresh);
          return;
        } catch (err) {
          // Another consumer recorded some of these keys meanwhile: filter again (bounded; then the caller retries).
          if (!dialect.isUniqueViolation(err) || attempt >= ATTEMPTS) throw err;
        }
      }
    },
  };
}
