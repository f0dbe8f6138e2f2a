import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { createStorage } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';

/**
 * Every test app starts on a database of its own, and building an embedded one by migrating it (about 50
 * migrations, 70–120 ms per app on a quiet machine, several times that on a loaded one) was a large share of the
 * suite's time. The run migrates one SQLite file once (global-setup.ts) and each app copies it; the app's own
 * migrator then finds nothing to apply. Tests that give an app a data directory of their own keep migrating it.
 *
 * PostgreSQL keeps an empty database per app, migrated by the app (app.ts freshPostgresDatabase): a database
 * created from a migrated template (CREATE DATABASE … TEMPLATE, PostgreSQL 15's WAL_LOG copy) and dropped after
 * made the same files slower, not faster (orders and api-keys: 90 s against 74 s on a loaded machine).
 */
export interface DatabaseTemplates {
  /** the migrated SQLite file */
  sqliteFile: string;
}

export async function makeDatabaseTemplates(runDir: string): Promise<DatabaseTemplates> {
  const dataDir = path.join(runDir, 'sqlite-template');
  mkdirSync(dataDir, { recursive: true });
  const storage = createStorage({ databaseUrl: null, dataDir, dbPoolMax: 1 });
  try {
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  } finally {
    await storage.close(); // the last connection folds the log into the file: ferry.db alone is the database
  }
  return { sqliteFile: path.join(dataDir, 'ferry.db') };
}

/** A migrated SQLite database in `dataDir` (the copy keeps the template's 0600). */
export function copySqliteTemplate(templates: DatabaseTemplates, dataDir: string): void {
  copyFileSync(templates.sqliteFile, path.join(dataDir, 'ferry.db'));
}
