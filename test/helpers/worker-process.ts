import type { ChildProcess } from 'node:child_process';
import { spawnEntry } from './child-process.js';

export interface WorkerProcess {
  child: ChildProcess;
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the real click worker (src/worker.ts compiled, what `npm run worker` runs from dist) with
 * only the given environment. `ready` waits for its "click worker started" line; without it, the promise
 * resolves at once (a worker expected to refuse its configuration).
 */
export async function startWorker(env: Record<string, string>, opts: { ready?: boolean } = {}): Promise<WorkerProcess> {
  const p = spawnEntry('src/worker.ts', env);
  const started = p.waitFor((e) => (e.msg === 'click worker started' ? true : undefined), 'start');
  if (opts.ready !== false) await started;
  else started.catch(() => undefined);
  return { child: p.child, logs: p.logs, stderr: p.stderr, exited: p.exited };
}
