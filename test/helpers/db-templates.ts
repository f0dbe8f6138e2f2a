import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { createStorage } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';

/**
 * Every test app starts on a database of its own, and building one by migrating it was a large share of the
 * suite's time: about 55 migrations, 70–120 ms on SQLite and 250 ms on PostgreSQL per app on a quiet machine, 2–3 s
 * on PostgreSQL while the suite's two workers load the CPU. The run migrates one of each engine once
 * (global-setup.ts) and each app copies it: the SQLite file, or a PostgreSQL database created from the template
 * (PostgreSQL 15's WAL_LOG copy, about 0.3–0.6 s under the same load). The app's own migrator then finds nothing to
 * apply. Tests that need an empty database (migrations, restarts of a server process on its own data) keep making
 * one (app.ts freshPostgresDatabase, a data directory of their own).
 *
 * Dropping a copy takes 0.3–2 s of PostgreSQL's time that no test waits for: a test app's close() queues it
 * (dropLater) and returns, and the teardown drops whatever the workers had not dropped yet.
 */
export interface DatabaseTemplates {
  /** the migrated SQLite file */
  sqliteFile: string;
  /** the migrated PostgreSQL database (null without TEST_DATABASE_URL) */
  postgres: string | null;
  /** the prefix of this run's PostgreSQL databases: the teardown drops any still there */
  postgresPrefix: string | null;
}

const adminUrl = (): string => process.env.TEST_DATABASE_URL!;

/** Runs `run` on a connection to TEST_DATABASE_URL (the server's admin database), closed after. */
export async function onAdmin<T>(run: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** TEST_DATABASE_URL naming the database `name` instead. */
export function postgresDatabaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function migrated(databaseUrl: string | null, dataDir: string): Promise<void> {
  const storage = createStorage({ databaseUrl, dataDir, dbPoolMax: 1 });
  try {
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  } finally {
    await storage.close(); // SQLite: the last connection folds the log into the file, ferry.db alone is the database
  }
}

export async function makeDatabaseTemplates(runDir: string): Promise<DatabaseTemplates> {
  const sqliteDir = path.join(runDir, 'sqlite-template');
  mkdirSync(sqliteDir, { recursive: true });
  await migrated(null, sqliteDir);
  const sqliteFile = path.join(sqliteDir, 'ferry.db');
  if (!process.env.TEST_DATABASE_URL) return { sqliteFile, postgres: null, postgresPrefix: null };
  const prefix = `ferry_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const template = `${prefix}_template`;
  await onAdmin((c) => c.query(`create database ${template}`));
  await migrated(postgresDatabaseUrl(template), sqliteDir);
  return { sqliteFile, postgres: template, postgresPrefix: prefix };
}

/** A migrated SQLite database in `dataDir` (the copy keeps the template's 0600). */
export function copySqliteTemplate(templates: DatabaseTemplates, dataDir: string): void {
  copyFileSync(templates.sqliteFile, path.join(dataDir, 'ferry.db'));
}

/** A migrated PostgreSQL database of its own; drop() queues its removal (dropLater). */
export async function copyPostgresTemplate(
  templates: DatabaseTemplates,
): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!templates.postgres) throw new Error('copyPostgresTemplate: the run has no PostgreSQL template');
  const name = `${templates.postgresPrefix}_${Math.random().toString(36).slice(2, 10)}`;
  await onAdmin((c) => c.query(`create database ${name} template ${templates.postgres} strategy wal_log`));
  return { url: postgresDatabaseUrl(name), drop: () => dropLater(name) };
}

/** Drops still queued in this worker process, one at a time. */
let dropping: Promise<void> = Promise.resolve();
let queued = 0;
/** Beyond this many queued drops a test's close() waits for the queue, so that the databases cannot pile up. */
const MAX_QUEUED_DROPS = 4;

function dropLater(name: string): Promise<void> {
  queued += 1;
  dropping = dropping
    .then(() => onAdmin((c) => c.query(`drop database if exists ${name} with (force)`)))
    // A drop that fails (the server restarting under a fault test) leaves the database to the teardown.
    .catch(() => undefined)
    .finally(() => (queued -= 1))
    .then(() => undefined);
  return queued > MAX_QUEUED_DROPS ? dropping : Promise.resolve();
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
