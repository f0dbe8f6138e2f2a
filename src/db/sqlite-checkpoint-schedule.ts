import type SQLite from 'better-sqlite3';

/**
 * A PASSIVE checkpoint (sqlite-checkpointer.ts): it never blocks another connection, nor does one of them block
 * it (pages a reader still needs stay in the log until the next). Returns the error's message, if it failed.
 */
export function passiveCheckpoint(db: SQLite.Database): string | null {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    return null;
  } catch (err) {
    return String((err as Error | undefined)?.message ?? err);
  }
}

/**
 * The checkpoints of a thread that took them over (`Checkpointer.handOver`), every `intervalMs` from its start:
 * `runIfDue` between its own transactions, and from a timer while it waits for work.
 */
export function checkpointSchedule(db: SQLite.Database, intervalMs: number, report: (message: string) => void) {
  let next = performance.now() + intervalMs;
  return {
    runIfDue(): void {
      if (performance.now() < next) return;
      next = performance.now() + intervalMs;
      const error = passiveCheckpoint(db);
      if (error !== null) report(error);
    },
  };
}
