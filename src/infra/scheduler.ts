import type { FastifyBaseLogger } from 'fastify';

/**
 * Periodic background jobs (expired tokens, idempotency keys, link sweep). Each run is awaited before the
 * next is scheduled, failures are logged, and stop() waits for a run in progress.
 */
export function createScheduler(log: FastifyBaseLogger) {
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<unknown>>();
  let stopped = false;

  return {
    every(name: string, ms: number, job: () => Promise<unknown>): void {
      const tick = () => {
        if (stopped) return;
        const run = job()
          .catch((err: unknown) => log.error({ err, job: name }, 'background job failed'))
          .finally(() => {
            running.delete(run);
            if (!stopped) schedule();
          });
        running.add(run);
      };
      const schedule = () => {
        const t = setTimeout(() => {
          timers.delete(t);
          tick();
        }, ms);
        t.unref();
        timers.add(t);
      };
      schedule();
    },
    async stop(): Promise<void> {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.all(running);
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
