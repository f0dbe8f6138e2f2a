import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import { createDialect, type Dialect } from './dialect.js';
import type { Database } from './types.js';

// int8 (bigint) columns hold ids and millisecond timestamps, all below 2^53: read them as JS numbers.
pg.types.setTypeParser(20, (v) => Number(v));

export interface Storage {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The raw better-sqlite3 handle on the embedded engine (for hot-path prepared statements); null on PostgreSQL. */
  sqlite: SQLite.Database | null;
  /** The pg pool on PostgreSQL (pool metrics); null on SQLite. */
  pool: pg.Pool | null;
  close(): Promise<void>;
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
  const sqlite = new SQLite(path.join(config.dataDir, 'ferry.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, dialect: createDialect('sqlite'), sqlite, pool: null, close: () => db.destroy() };
}
