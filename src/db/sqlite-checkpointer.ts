import { Worker } from 'node:worker_threads';
import { sqliteDriverPath } from './sqlite-driver.js';

/**
 * Moves SQLite's WAL checkpoints off the event loop. A checkpoint copies the write-ahead log into the database
 * file and fsyncs it; left to SQLite's automatic checkpoint it runs inside whichever commit crosses the
 * threshold, i.e. inside a request or a click flush, and on this class of machine each one stalled the event
 * loop for 10-40 ms (bench/redirect.ts: p99 54 ms before, see the README). Here a worker thread with its
 * own connection runs a PASSIVE checkpoint (never blocks readers or writers) every `intervalMs`; the main
 * connection keeps a high automatic threshold only as a safety net should the worker ever stall.
 *
 * The worker is plain JavaScript evaluated from a string, so it runs the same under tsx, vitest and the
 * compiled build; it loads the driver from the path sqlite-driver.ts resolves.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
const checkpoint = () => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage({ error: String(err && err.message || err) }); }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.postMessage('stopped');
});
`;

export const MAIN_CONNECTION_AUTOCHECKPOINT_PAGES = 10_000;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startSqliteCheckpointer(file: string, intervalMs: number, onError: (message: string) => void): Checkpointer {
  const driver = sqliteDriverPath();
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, intervalMs } });
  worker.unref();
  let exited = false;
  worker.on('message', (m: unknown) => {
    if (typeof m === 'object' && m !== null && 'error' in m) onError(String((m as { error: unknown }).error));
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
