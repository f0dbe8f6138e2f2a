import type { FastifyBaseLogger } from 'fastify';

const DROP_WARNING_INTERVAL_MS = 10_000;

/**
 * Clicks a sink dropped (full, or closed), counted since start and logged at most once per 10 s: a full sink
 * drops many at once. `context` adds the sink's own figures to the warning.
 */
export function createDropCounter(
  log: FastifyBaseLogger,
  now: () => number,
  context: () => Record<string, unknown>,
  fullMessage: string,
) {
  let dropped = 0;
  let sinceWarning = 0;
  let lastWarning = Number.NEGATIVE_INFINITY;
  return {
    /** Counts one dropped click; returns false, what enqueue answers for it. */
    drop(closed: boolean): false {
      dropped += 1;
      sinceWarning += 1;
      const at = now();
      if (at - lastWarning >= DROP_WARNING_INTERVAL_MS) {
        log.warn(
          { dropped: sinceWarning, droppedTotal: dropped, ...context() },
          closed ? 'click after shutdown dropped' : fullMessage,
        );
        lastWarning = at;
        sinceWarning = 0;
      }
      return false;
    },
    count: () => dropped,
  };
}
