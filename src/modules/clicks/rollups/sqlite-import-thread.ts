import { parentPort, workerData } from 'node:worker_threads';
import { SqliteDatabase as Database } from '../../../db/sqlite-driver.js';
import { eventsOfMessage, type ClickBatchMessage } from './click-batch.js';
import { createSqliteRollupWriter } from './sqlite-rollup-writer.js';

/**
 * The imported visits' writer thread of sqlite-import-writer.ts (a module of its own, loaded like
 * sqlite-click-thread.ts). A message is one chunk of an import's visits with the import's bookkeeping for it,
 * written in one transaction of this thread's connection: the click records and rollups (sqlite-rollup-writer.ts,
 * the statements the live writer and the importer on the main connection use), then the bookkeeping's statements,
 * compiled on the main thread by the same Kysely code that runs them there (how far each item's visits came, the
 * job's counts). Chunks are written in the order they come; once one fails, no later one is written (each would
 * move an item's mark past visits that are not stored), each is answered with that failure.
 */
export interface SqliteImportThreadData {
  file: string;
  autocheckpoint: number;
  busyTimeoutMs: number;
}

export interface ImportChunkStatement {
  sql: string;
  parameters: readonly unknown[];
}

export type SqliteImportThreadRequest =
  'close' | { id: number; batch: ClickBatchMessage | null; statements: ImportChunkStatement[] };
export type SqliteImportThreadReply = { closed: true } | { id: number; error?: string };

const data = workerData as SqliteImportThreadData;
const port = parentPort!;

// As the main connection is opened (db/database.ts): the same foreign keys, durability and checkpoints.
const db = new Database(data.file);
db.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma(`wal_autocheckpoint = ${data.autocheckpoint}`);

const rollups = createSqliteRollupWriter(db);
const none = new Map<string, number>();
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');
const rollback = db.prepare('rollback');
const prepared = new Map<string, ReturnType<typeof db.prepare>>();
let failure: string | null = null;
const between = new Int32Array(new SharedArrayBuffer(4));

function write(batch: ClickBatchMessage | null, statements: readonly ImportChunkStatement[]): void {
  begin.run();
  try {
    if (batch !== null && batch.length > 0) {
      const events = eventsOfMessage(
        batch,
        Array.from({ length: batch.length }, (_, i) => i),
      );
      rollups.apply(events, { imported: true, known: none });
    }
    for (const s of statements) {
      let statement = prepared.get(s.sql);
      if (statement === undefined) prepared.set(s.sql, (statement = db.prepare(s.sql)));
      statement.run(s.parameters as unknown[]);
    }
    commit.run();
  } catch (err) {
    rollups.discard();
    if (db.inTransaction) rollback.run();
    throw err;
  }
}

port.on('message', (message: SqliteImportThreadRequest) => {
  if (message === 'close') {
    db.close();
    port.postMessage({ closed: true } satisfies SqliteImportThreadReply);
    port.close(); // the thread ends on its own (a profile of it is written)
    return;
  }
  if (failure === null) {
    try {
      // Room for the main connection's own writes (the job's heartbeat) between two chunks written back to back.
      if (message.id > 0) Atomics.wait(between, 0, 0, 2);
      write(message.batch, message.statements);
    } catch (err) {
      failure = String((err as Error | undefined)?.message ?? err);
    }
  }
  port.postMessage(
    (failure === null ? { id: message.id } : { id: message.id, error: failure }) satisfies SqliteImportThreadReply,
  );
});
