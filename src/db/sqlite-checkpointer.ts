import type { Worker } from 'node:worker_threads';
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
  /** whether the thread has started (it does when the first checkpoint is due) */
  readonly started: boolean;
  stop(): Promise<void>;
}

/**
 * The thread starts when the first checkpoint is due, `intervalMs` after the database opens, not at the open: a
 * process that ends before then (a `ferry` command, a short test) has nothing to checkpoint that its close does
 * not fold in, and a thread is a Node context of its own (about 160 ms of CPU to start, and its memory).
 */
export function startSqliteCheckpointer(
  file: string,
  intervalMs: number,
  onError: (message: string) => void,
): Checkpointer {
  const workerData: CheckpointThreadData = { file, intervalMs };
  let worker: Worker | null = null;
  let exited = false;
  const due = setTimeout(() => {
    worker = startModuleThread(import.meta.url, './sqlite-checkpoint-thread', { workerData });
    worker.unref();
    worker.on('message', (m: CheckpointThreadReply) => {
      if (m !== 'stopped') onError(m.error);
    });
    worker.on('error', (err) => onError(err.message));
    worker.on('exit', () => {
      exited = true;
    });
  }, intervalMs);
  due.unref();
  return {
    get started() {
      return worker !== null;
    },
    async stop() {
      clearTimeout(due);
      if (worker === null || exited) return;
      const running = worker;
      const stopped = new Promise<void>((resolve) => {
        running.once('message', () => resolve());
        running.once('exit', () => resolve());
      });
      running.postMessage('stop');
      await stopped;
      await running.terminate();
    },
  };
}
