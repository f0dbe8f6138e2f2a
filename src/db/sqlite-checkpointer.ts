import { startModuleThread } from '../infra/module-thread.js';
import type { CheckpointThreadData, CheckpointThreadReply } from './sqlite-checkpoint-thread.js';

/**
 * Moves SQLite's WAL checkpoints off the event loop. A checkpoint copies the write-ahead log into the database
 * file and fsyncs it; left to SQLite's automatic checkpoint it runs inside whichever commit crosses the
 * threshold, i.e. inside a request or a click flush, and on this class of machine each one stalled the event
 * loop for 10-40 ms (a redirect p99 of 54 ms; docs/architecture.md, "Writing clicks"). Here a worker thread with its
 * own connection runs a PASSIVE checkpoint (never blocks readers or writers) every `intervalMs`; the main
 * connection keeps a high automatic threshold only as a safety net should the worker ever stall.
 *
 * The thread is sqlite-checkpoint-thread.ts, a module of its own (infra/module-thread.ts).
 */
export const MAIN_CONNECTION_AUTOCHECKPOINT_PAGES = 10_000;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startSqliteCheckpointer(
  file: string,
  intervalMs: number,
  onError: (message: string) => void,
): Checkpointer {
  const workerData: CheckpointThreadData = { file, intervalMs };
  const worker = startModuleThread(import.meta.url, './sqlite-checkpoint-thread', { workerData });
  worker.unref();
  let exited = false;
  worker.on('message', (m: CheckpointThreadReply) => {
    if (m !== 'stopped') onError(m.error);
  });
  worker.on('error', (err) => onError(err.message));
  worker.on('exit', () => {
    exited = true;
  });
  return {
    async stop() {
      if (exited) return;
      const stopped = new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.once('exit', () => resolve());
      });
      worker.postMessage('stop');
      await stopped;
      await worker.terminate();
    },
  };
}
