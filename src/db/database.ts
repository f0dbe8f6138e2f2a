import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import { createDialect, type Dialect } from './dialect.js';
import { MAIN_CONNECTION_AUTOCHECKPOINT_PAGES, startSqliteCheckpointer } from './sqlite-checkpointer.js';
import type { Database } from './types.js';

// int8 (bigint) columns hold ids and millisecond timestamps, all below 2^53: read them as JS numbers.
pg.types.setTypeParser(20, (v) => Number(v));

/** Longer intervals mean fewer, larger checkpoints (and fsyncs); 5 s measured best in bench/redirect.ts. */
const CHECKPOINT_INTERVAL_MS = 5_000;

export interface Storage {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The raw better-sqlite3 handle on the embedded engine (for hot-path prepared statements); null on PostgreSQL. */
  sqlite: SQLite.Database | null;
  /** The pg pool on PostgreSQL (pool metrics); null on SQLite. */
  pool: pg.Pool | null;
  close(): Promise<void>;
}

/**
 * Whether a statement of our own on the embedded engine's handle (a hot-path prepared statement beside
 * Kysely) may run now: not while a transaction of Kysely's holds the connection. A read would see that
 * transaction's uncommitted rows, which Kysely's mutex keeps from its own queries; a write would join it as a
 * savepoint that it could still roll back after the caller was told the write happened.
 */
export const outsideKyselyTransaction = (sqlite: SQLite.Database): boolean => !sqlite.inTransaction;

/** Prepared statements kept per SQL text (most recently used first out of the map last). */
const STATEMENT_CACHE = 500;

/**
 * Kysely's SQLite driver prepares every query anew (better-sqlite3's prepare: 20-40 µs, a tenth of a link
 * creation; bench/). Its queries are a fixed set of SQL texts with parameters, so the handle it is given
 * hands out the same prepared statement again for the same text. Safe because Kysely runs one query at a
 * time on this single connection and runs each to completion (`all`/`run`); Ferry streams no query.
 */
function withStatementCache(sqlite: SQLite.Database): Pick<SQLite.Database, 'prepare' | 'close'> {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(source: string) {
      let stmt = statements.get(source);
      if (stmt === undefined) {
        stmt = sqlite.prepare(source);
        if (statements.size >= STATEMENT_CACHE) statements.delete(statements.keys().next().value!);
        statements.set(source, stmt);
      }
      return stmt;
    },
    close: () => sqlite.close(),
  } as Pick<SQLite.Database, 'prepare' | 'close'>;
}

export function createStorage(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolMax'>): Storage {
  if (config.databaseUrl) {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.dbPoolMax });
    // An idle client that errors (server restart) must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: createDialect('postgres'), sqlite: null, pool, close: () => db.destroy() };
  }
  mkdirSync(config.dataDir, { recursive: true });
  const file = path.join(config.dataDir, 'ferry.db');
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Checkpoints (and their fsync) run in a worker thread, not inside a request (sqlite-checkpointer.ts).
  sqlite.pragma(`wal_autocheckpoint = ${MAIN_CONNECTION_AUTOCHECKPOINT_PAGES}`);
  const checkpointer = startSqliteCheckpointer(file, CHECKPOINT_INTERVAL_MS, (message) => process.emitWarning(`SQLite checkpoint failed: ${message}`));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const close = async () => {
    await checkpointer.stop();
    await db.destroy(); // the last connection to close folds the remaining log into the database file
  };
  return { db, dialect: createDialect('sqlite'), sqlite, pool: null, close };
}
