import { parentPort, workerData } from 'node:worker_threads';
import { SqliteDatabase } from './sqlite-driver.js';

/**
 * The WAL checkpoint thread of sqlite-checkpointer.ts: its own connection, a PASSIVE checkpoint (never blocks
 * readers or writers) every `intervalMs`, errors reported to the main thread, 'stop' closes the connection.
 */
export interface CheckpointThreadData {
  file: string;
  intervalMs: number;
}

export type CheckpointThreadReply = 'stopped' | { error: string };

const data = workerData as CheckpointThreadData;
const port = parentPort!;
const db = new SqliteDatabase(data.file);
db.pragma('busy_timeout = 1000');

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    port.postMessage({ error: String((err as Error | undefined)?.message ?? err) } satisfies CheckpointThreadReply);
  }
}, data.intervalMs);

port.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  port.postMessage('stopped' satisfies CheckpointThreadReply);
});
