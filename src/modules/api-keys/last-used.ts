/** `last_used_at` moves at most this often per key (SPEC §14). */
export const LAST_USED_RESOLUTION_MS = 60_000;
/** Keys whose last recorded use this process remembers; forgetting one costs at most one extra write. */
const REMEMBERED_KEYS = 50_000;

/**
 * `last_used_at` without a database write per request: a use is noted in memory, at most once a minute per
 * key, and the noted uses are written together by `flush()` (every few seconds, on close, and before this
 * instance lists keys). A use is not even noted when the row read to authenticate the request already says
 * the key was used in the last minute (by this instance or another), so several instances together still
 * write each key about once a minute.
 */
export function createLastUsedTracker(write: (uses: ReadonlyMap<number, number>) => Promise<void>) {
  let pending = new Map<number, number>();
  /** per key: the latest use this process noted or read */
  const recorded = new Map<number, number>();

  return {
    /** A request used key `id` at `now`; `stored` is the last_used_at its row had. */
    note(id: number, now: number, stored: number | null): void {
      const last = Math.max(stored ?? -Infinity, recorded.get(id) ?? -Infinity);
      if (now - last < LAST_USED_RESOLUTION_MS) return;
      if (recorded.size >= REMEMBERED_KEYS && !recorded.has(id)) recorded.delete(recorded.keys().next().value!);
      recorded.set(id, now);
      pending.set(id, now);
    },

    /** Writes what was noted since the last flush; a failed write is noted again, to be retried. */
    async flush(): Promise<void> {
      if (pending.size === 0) return;
      const batch = pending;
      pending = new Map();
      try {
        await write(batch);
      } catch (err) {
        for (const [id, at] of batch) if ((pending.get(id) ?? -Infinity) < at) pending.set(id, at);
        throw err;
      }
    },

    pendingCount: (): number => pending.size,
  };
}

export type LastUsedTracker = ReturnType<typeof createLastUsedTracker>;
