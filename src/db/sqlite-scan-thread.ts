import { parentPort, workerData } from 'node:worker_threads';
import { SqliteDatabase } from './sqlite-driver.js';

/**
 * The scan thread of sqlite-scans.ts: its own read-only connection, one query at a time, each answered with its
 * rows or its error; 'close' closes the connection and answers `{ closed: true }` (infra/module-thread.ts
 * closeModuleThread).
 */
export interface ScanThreadData {
  file: string;
}

export interface ScanRequest {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}

export type ScanReply = { id: number; rows: unknown[] } | { id: number; error: string } | { closed: true };

const data = workerData as ScanThreadData;
const port = parentPort!;
const db = new SqliteDatabase(data.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');

port.on('message', (message: ScanRequest | 'close') => {
  if (message === 'close') {
    db.close();
    port.postMessage({ closed: true } satisfies ScanReply);
    return;
  }
  try {
    const rows = db.prepare(message.sql).all(...message.parameters);
    port.postMessage({ id: message.id, rows } satisfies ScanReply);
  } catch (err) {
    port.postMessage({ id: message.id, error: String((err as Error | undefined)?.message ?? err) } satisfies ScanReply);
  }
});
