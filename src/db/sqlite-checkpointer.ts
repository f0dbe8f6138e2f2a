import { closeModuleThread, startModuleThread } from '../infra/module-thread.js';
import type { CheckpointThreadData, CheckpointThreadReply } from './sqlite-checkpoint-thread.js';

/**
 * Moves SQLite's WAL checkpoints off the event loop. A checkpoint copies the write-ahead log into the database
 * file and fsyncs it; left to SQLite's automatic checkpoint it runs inside whichever commit crosses the
 * threshold, i.e. inside a request or a click flush, and on this class of machine each one stalled the event
 * loop for 10-40 ms (a redirect p99 of 54 ms; docs/architecture.md, "Writing clicks"). Here a thread with its own
 * connection runs a PASSIVE checkpoint (never blocks readers or writers) every `intervalMs`; the main
 * connection keeps a high automatic threshold only as a safety net should the thread ever stall.
 *
 * Which thread: one of its own (sqlite-checkpoint-thread.ts, a module of its own: infra/module-thread.ts), unless
 * a thread that already holds a connection to the file takes the checkpoints over (`handOver`): a server's click
 * writer does, and the process saves a thread's Node context (about 9 MB of a server's RSS, docs/performance.md).
 */
export const MAIN_CONNECTION_AUTOCHECKPOINT_PAGES = 10_000;

export interface Checkpointer {
  /** whether its own thread has started (it does when the first checkpoint is due, unless handed over) */
  readonly started: boolean;
  /**
   * Another thread, with a connection of its own to the file, runs the checkpoints (sqlite-checkpoint-schedule.ts)
   * until it calls `release` (when it stops, or fails): meanwhile this one's thread is stopped, or never starts.
   */
  handOver(): CheckpointHandover;
  stop(): Promise<void>;
}

export interface CheckpointHandover {
  intervalMs: number;
  /** a checkpoint that failed in the other thread, reported as this checkpointer's own are */
  report(message: string): void;
  release(): void;
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
  let own: OwnThread | null = null;
  let stopped = false;
  let holders = 0;
  const schedule = () => {
    const timer = setTimeout(() => (own = startOwnThread({ file, intervalMs }, onError)), intervalMs);
    timer.unref();
    return timer;
  };
  let due: NodeJS.Timeout | null = schedule();
  let ending: Promise<void> = Promise.resolve();
  /** Ends its own thread, if it runs; and whatever ended it before (a shutdown waits for both). */
  const endOwn = () => {
    const running = own;
    own = null;
    if (due) clearTimeout(due);
    due = null;
    ending = Promise.all([ending, running?.end()]).then(() => undefined);
    return ending;
  };
  return {
    get started() {
      return own !== null;
    },
    handOver() {
      holders += 1;
      void endOwn();
      let released = false;
      return {
        intervalMs,
        report: onError,
        release() {
          if (released) return;
          released = true;
          holders -= 1;
          // Its own thread again, when the next checkpoint is due (not during a shutdown).
          if (holders === 0 && !stopped) due = schedule();
        },
      };
    },
    async stop() {
      stopped = true;
      await endOwn();
    },
  };
}

interface OwnThread {
  /** asks it to close its connection, then terminates it */
  end(): Promise<void>;
}

function startOwnThread(workerData: CheckpointThreadData, onError: (message: string) => void): OwnThread {
  const worker = startModuleThread(import.meta.url, './sqlite-checkpoint-thread', { workerData });
  let exited = false;
  worker.unref();
  worker.on('message', (m: CheckpointThreadReply) => {
    if ('error' in m) onError(m.error);
  });
  worker.on('error', (err) => onError(err.message));
  worker.on('exit', () => {
    exited = true;
  });
  return {
    async end() {
      if (!exited) await closeModuleThread(worker);
    },
  };
}
