import { createPrivateFile, makePrivateDir } from '../lib/private-files.js';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { Config } from '../config.js';
import { createDialect, type Dialect } from './dialect.js';
import { CONNECT_TIMEOUT_MS, watchPgConnections } from './pg-connection-faults.js';
import { pgDriver } from './pg-driver.js';
import {
  MAIN_CONNECTION_AUTOCHECKPOINT_PAGES,
  startSqliteCheckpointer,
  type Checkpointer,
} from './sqlite-checkpointer.js';
import { SqliteDatabase } from './sqlite-driver.js';
import { ImmediateSqliteDialect, MAIN_BUSY_TIMEOUT_MS } from './sqlite-immediate.js';
import type { Database } from './types.js';

/** Longer intervals mean fewer, larger checkpoints (and fsyncs); 5 s measured best in bench/redirect.ts. */
const CHECKPOINT_INTERVAL_MS = 5_000;

export interface Storage {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The raw better-sqlite3 handle on the embedded engine (for hot-path prepared statements); null on PostgreSQL. */
  sqlite: SQLite.Database | null;
  /** The pg pool on PostgreSQL; null on SQLite. */
  pool: pg.Pool | null;
  /** The WAL checkpoints' runner on the embedded engine (a thread may take them over: handOver); null on PostgreSQL. */
  checkpointer: Checkpointer | null;
  /** The database connections by state, for /metrics (ferry_db_pool_connections). */
  connections(): ConnectionStats;
  /** Who hears of a lost database connection (PostgreSQL; db/pg-connection-faults.ts): the process logs it. */
  onConnectionError(listener: (err: Error) => void): void;
  close(): Promise<void>;
}

export interface ConnectionStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** better-sqlite3 is synchronous: while anything else (a scrape) runs, no query holds the one connection. */
const SQLITE_CONNECTIONS: ConnectionStats = Object.freeze({ total: 1, idle: 1, waiting: 0, max: 1 });

/**
 * Whether a statement of our own on the embedded engine's handle (a hot-path prepared statement beside
 * Kysely) may run now: not while a transaction of Kysely's holds the connection. A read would see that
 * transaction's uncommitted rows, which Kysely's mutex keeps from its own queries; a write would join it as a
 * savepoint that it could still roll back after the caller was told the write happened.
 */
export const outsideKyselyTransaction = (sqlite: SQLite.Database): boolean => !sqlite.inTransaction;

/**
 * One process owns the database (the embedded engine): no other instance writes to it, so this one may be
 * the sole writer and may front it with a journal in DATA_DIR. False on PostgreSQL.
 */
export const isEmbedded = (storage: Pick<Storage, 'sqlite'>): boolean => storage.sqlite !== null;

/**
 * The embedded engine's database file, for a worker thread that opens its own connection to it (the click
 * writer, modules/clicks/rollups/sqlite-click-writer.ts); null on PostgreSQL.
 */
export const embeddedDatabaseFile = (storage: Pick<Storage, 'sqlite'>): string | null => storage.sqlite?.name ?? null;

/** A hot-path prepared statement (see FastStatements). */
export type FastStatement<P extends unknown[] | object, R> = SQLite.Statement<P, R>;

/**
 * Prepared statements beside Kysely for the hot paths (the redirect's lookup, the statistics' frequent reads):
 * a better-sqlite3 statement answers synchronously in microseconds, where Kysely's compilation costs more than
 * the query. Callers run one directly (`statement.get(…)`, no wrapper on the hot path) when `usable()`, and
 * otherwise take their Kysely path.
 */
export interface FastStatements {
  prepare<P extends unknown[] | object = unknown[], R = unknown>(text: string): FastStatement<P, R>;
  /** may a prepared statement run now: not inside a Kysely transaction (outsideKyselyTransaction) */
  usable(): boolean;
  /** a function running `fn` in one transaction of the handle (nested: a savepoint); `.immediate` takes the write lock first */
  transaction: SQLite.Database['transaction'];
}

/** The engine's fast statements: the embedded engine's; null on PostgreSQL (its callers use Kysely). */
export function fastStatements(storage: Pick<Storage, 'sqlite'>): FastStatements | null {
  const sqlite = storage.sqlite;
  if (sqlite === null) return null;
  return {
    prepare: <P extends unknown[] | object = unknown[], R = unknown>(text: string) => sqlite.prepare<P, R>(text),
    usable: () => !sqlite.inTransaction,
    transaction: sqlite.transaction.bind(sqlite) as SQLite.Database['transaction'],
  };
}

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

/** A pg client class that gives up connecting after CONNECT_TIMEOUT_MS (the pool's queue has no such bound). */
function clientWithConnectTimeout(driver: typeof pg): typeof pg.Client {
  return class ClientWithConnectTimeout extends driver.Client {
    constructor(config?: string | pg.ClientConfig) {
      super({
        ...(typeof config === 'string' ? { connectionString: config } : config),
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      });
    }
  };
}

/**
 * The database of DATABASE_URL, or else DATA_DIR's embedded one. A tool beside the server (the CLI) opens it
 * the same way: its changes reach the server's caches through the outbox (db/outbox.ts). `warn` hears what goes
 * wrong in the background (a failed checkpoint); by default it is a warning of the process (its stderr), which a
 * caller that has its own output (the CLI, possibly run inside another program) replaces.
 */
export function createStorage(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolMax'>,
  warn: (line: string) => void = (line) => process.emitWarning(line),
): Storage {
  if (config.databaseUrl) {
    // The connect timeout is the client's own, not the pool's: pg-pool applies its connectionTimeoutMillis to a
    // wait for a busy pool as well, which turned a burst of requests queued behind DB_POOL_MAX healthy
    // connections into 503s on a loaded machine. Waiting for a turn is backpressure; failing to connect is
    // the database being unavailable.
    const driver = pgDriver();
    const pool = new driver.Pool({
      connectionString: config.databaseUrl,
      max: config.dbPoolMax,
      Client: clientWithConnectTimeout(driver),
    });
    // Every client, idle or checked out, has an error listener; a failed connect is DatabaseUnavailableError.
    const faults = watchPgConnections(pool);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: faults.pool as pg.Pool }) });
    const connections = (): ConnectionStats => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: pool.options.max ?? 10,
    });
    return {
      db,
      dialect: createDialect('postgres'),
      sqlite: null,
      pool,
      checkpointer: null,
      connections,
      onConnectionError: faults.onError,
      close: () => db.destroy(),
    };
  }
  makePrivateDir(config.dataDir);
  const file = path.join(config.dataDir, 'ferry.db');
  // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database file's mode (SPEC §25).
  createPrivateFile(file);
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${MAIN_BUSY_TIMEOUT_MS}`);
  // Checkpoints (and their fsync) run in a worker thread, not inside a request (sqlite-checkpointer.ts).
  sqlite.pragma(`wal_autocheckpoint = ${MAIN_CONNECTION_AUTOCHECKPOINT_PAGES}`);
  const checkpointer = startSqliteCheckpointer(file, CHECKPOINT_INTERVAL_MS, (message) =>
    warn(`SQLite checkpoint failed: ${message}`),
  );
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }, sqlite),
  });
  const close = async () => {
    await checkpointer.stop();
    await db.destroy(); // the last connection to close folds the remaining log into the database file
  };
  return {
    db,
    dialect: createDialect('sqlite'),
    sqlite,
    pool: null,
    checkpointer,
    connections: () => SQLITE_CONNECTIONS,
    onConnectionError: () => undefined,
    close,
  };
}
