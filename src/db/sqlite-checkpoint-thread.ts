import { parentPort, workerData } from 'node:worker_threads';
import { passiveCheckpoint } from './sqlite-checkpoint-schedule.js';
import { SqliteDatabase } from './sqlite-driver.js';

/**
 * The WAL checkpoint thread of sqlite-checkpointer.ts: its own connection, a PASSIVE checkpoint (never blocks
 * readers or writers) at its start and every `intervalMs`, errors reported to the main thread; 'close' closes the
 * connection and answers `{ closed: true }` (infra/module-thread.ts closeModuleThread).
 */
export interface CheckpointThreadData {
  file: string;
  intervalMs: number;
}

export type CheckpointThreadReply = { closed: true } | { error: string };

const data = workerData as CheckpointThreadData;
const port = parentPort!;
const db = new SqliteDatabase(data.file);
db.pragma('busy_timeout = 1000');

function checkpoint(): void {
  const error = passiveCheckpoint(db);
  if (error !== null) port.postMessage({ error } satisfies CheckpointThreadReply);
}

// The thread starts when the first checkpoint is due (sqlite-checkpointer.ts): that one now, then every interval.
checkpoint();
const timer = setInterval(checkpoint, data.intervalMs);

port.on('message', (message: unknown) => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  port.postMessage({ closed: true } satisfies CheckpointThreadReply);
});
