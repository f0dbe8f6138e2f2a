import {
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type Transaction,
} from 'kysely';
import { MAIN_CONNECTION_AUTOCHECKPOINT_PAGES } from '../../../db/sqlite-checkpointer.js';
import { MAIN_BUSY_TIMEOUT_MS } from '../../../db/sqlite-immediate.js';
import type { Database } from '../../../db/types.js';
import { closeModuleThread, startModuleThread } from '../../../infra/module-thread.js';
import type { ClickEvent } from '../event/click-event.js';
import { ClickBatch, transferablesOf } from './click-batch.js';
import type {
  ImportChunkStatement,
  SqliteImportThreadData,
  SqliteImportThreadReply,
  SqliteImportThreadRequest,
} from './sqlite-import-thread.js';

/**
 * An import's visits written by a thread of their own on the embedded engine (the CLI, which serves nothing
 * beside the import): each chunk's transaction — its click records and rollups, then the import's bookkeeping —
 * is handed to the thread, and the importer goes on reading its source while the thread writes. A chunk writes
 * exactly what the importer's own transaction on the main connection writes (sqlite-rollup-writer.ts, the same
 * statements; the bookkeeping compiled by the same Kysely code), in the same order of commits; a crash leaves the
 * same states, since every chunk's visits commit with the marks of how far they came.
 *
 * Measured (bench/import.ts, docs/performance.md "Imports"): the visits' statements, their commits and the
 * planning of their rollups were about half of the import's time on one thread, reading MariaDB the rest.
 */
export interface ImportedVisitsThread {
  /**
   * Hands `events`' transaction to the thread, with the statements `bookkeeping` runs on the transaction it is
   * given (they are compiled, not run, there: it must not read); resolves once handed over, with `committed`.
   * Chunks commit in the order they were written, and after one failed none later is written (each rejects).
   */
  write(
    events: readonly ClickEvent[],
    bookkeeping: (tx: Transaction<Database>) => Promise<void>,
  ): Promise<{ committed: Promise<void> }>;
  close(): Promise<void>;
}

/** A Kysely that compiles SQLite's statements and keeps them instead of running them (a transaction's too). */
function compilingKysely(): { db: Kysely<Database>; taken: () => ImportChunkStatement[] } {
  let statements: ImportChunkStatement[] = [];
  const connection: DatabaseConnection = {
    executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      statements.push({ sql: query.sql, parameters: query.parameters });
      return Promise.resolve({ rows: [] });
    },
    streamQuery() {
      throw new Error('the import thread compiles statements: it cannot stream');
    },
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: () => Promise.resolve(connection),
    beginTransaction: async () => undefined,
    commitTransaction: async () => undefined,
    rollbackTransaction: async () => undefined,
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new SqliteIntrospector(k),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
  return {
    db,
    taken() {
      const out = statements;
      statements = [];
      return out;
    },
  };
}

/** The thread for one import run, on the database file `file`. */
export function createImportedVisitsThread(file: string): ImportedVisitsThread {
  const workerData: SqliteImportThreadData = {
    file,
    autocheckpoint: MAIN_CONNECTION_AUTOCHECKPOINT_PAGES,
    busyTimeoutMs: MAIN_BUSY_TIMEOUT_MS,
  };
  const worker = startModuleThread(import.meta.url, './sqlite-import-thread', { workerData });
  const pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  const compiling = compilingKysely();
  let compiled: Promise<void> = Promise.resolve();
  let nextId = 0;
  let failure: Error | null = null;
  let closing: Promise<void> | null = null;

  const settle = (id: number, error?: string) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (error === undefined) p.resolve();
    else p.reject(new Error(`imported visits not written: ${error}`));
  };
  worker.on('message', (m: SqliteImportThreadReply) => {
    if ('id' in m) settle(m.id, m.error);
  });
  const fail = (err: Error) => {
    failure ??= err;
    for (const id of [...pending.keys()]) settle(id, failure.message);
  };
  worker.on('error', fail);
  worker.on('exit', () => fail(new Error('the import thread stopped')));

  return {
    async write(events, bookkeeping) {
      // One chunk at a time is compiled (the statements are collected in order, then taken).
      const handed = compiled.then(async () => {
        if (failure) throw failure;
        compiling.taken();
        await compiling.db.transaction().execute(bookkeeping);
        const statements = compiling.taken();
        const batch = events.length ? ClickBatch.of(events).toMessage() : null;
        const id = nextId++;
        const committed = new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject }));
        worker.postMessage(
          { id, batch, statements } satisfies SqliteImportThreadRequest,
          batch ? transferablesOf(batch) : [],
        );
        return { committed };
      });
      compiled = handed.then(
        () => undefined,
        () => undefined,
      );
      return handed;
    },
    close() {
      closing ??= failure ? worker.terminate().then(() => undefined) : closeModuleThread(worker);
      return closing;
    },
  };
}
