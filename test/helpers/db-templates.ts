import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { createStorage } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';

/**
 * Every test app starts on a database of its own, and building one by migrating it was a large share of the
 * suite's time (about 50 migrations: 70–120 ms on SQLite, 250 ms on PostgreSQL, per app, on a quiet machine).
 * The run migrates one of each engine once (global-setup.ts); an app copies it: the SQLite file, or a PostgreSQL
 * database created from the template. The app's own migrator then finds nothing to apply. Tests that need an
 * empty database (migrations, restarts of a server process on its own data) keep making one
 * (app.ts freshPostgresDatabase, a data directory of their own).
 */
export interface DatabaseTemplates {
  /** the migrated SQLite file */
  sqliteFile: string;
  /** the migrated PostgreSQL database (null without TEST_DATABASE_URL) */
  postgres: string | null;
  /** the prefix of this run's databases: the teardown drops any a test left behind */
  postgresPrefix: string | null;
}

const adminUrl = () => process.env.TEST_DATABASE_URL!;

async function onAdmin<T>(run: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export const databaseUrl = (name: string): string => {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
};

async function migrated(databaseUrl: string | null, dataDir: string): Promise<void> {
  const storage = createStorage({ databaseUrl, dataDir, dbPoolMax: 1 });
  try {
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  } finally {
    await storage.close();
  }
}

export async function makeDatabaseTemplates(runDir: string): Promise<DatabaseTemplates> {
  const sqliteDir = path.join(runDir, 'sqlite-template');
  mkdirSync(sqliteDir, { recursive: true });
  await migrated(null, sqliteDir);
  if (!process.env.TEST_DATABASE_URL)
    return { sqliteFile: path.join(sqliteDir, 'ferry.db'), postgres: null, postgresPrefix: null };
  const prefix = `ferry_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const template = `${prefix}_template`;
  await onAdmin((c) => c.query(`create database ${template}`));
  await migrated(databaseUrl(template), sqliteDir);
  return { sqliteFile: path.join(sqliteDir, 'ferry.db'), postgres: template, postgresPrefix: prefix };
}

/** A migrated SQLite database in `dataDir` (0600, as the server makes it). */
export function copySqliteTemplate(templates: DatabaseTemplates, dataDir: string): void {
  copyFileSync(templates.sqliteFile, path.join(dataDir, 'ferry.db'));
}

/** A migrated PostgreSQL database of its own; drop() removes it. */
export async function copyPostgresTemplate(
  templates: DatabaseTemplates,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${templates.postgresPrefix}_${Math.random().toString(36).slice(2, 10)}`;
  await onAdmin((c) => c.query(`create database ${name} template ${templates.postgres}`));
  return {
    url: databaseUrl(name),
    drop: () => onAdmin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

export async function removeDatabaseTemplates(templates: DatabaseTemplates): Promise<void> {
  if (!templates.postgresPrefix) return;
  await onAdmin(async (c) => {
    const left = await c.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [
      `${templates.postgresPrefix}\\_%`,
    ]);
    for (const { datname } of left.rows) await c.query(`drop database if exists ${datname} with (force)`);
  });
}
