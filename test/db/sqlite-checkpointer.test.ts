import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { createStorage } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { SqliteDatabase } from '../../src/db/sqlite-driver.js';
import { startSqliteCheckpointer, type Checkpointer } from '../../src/db/sqlite-checkpointer.js';
import { createSqliteClickWriter } from '../../src/modules/clicks/rollups/sqlite-click-writer.js';
import { waitFor } from '../helpers/scale-out.js';

/**
 * The WAL checkpoints' thread (src/db/sqlite-checkpointer.ts) starts when the first checkpoint is due, not when
 * the database opens, and then folds the log into the database file without the main connection's help. A
 * thread with a connection of its own to the file (a server's click writer) may take the checkpoints over.
 */
describe('the SQLite checkpoint thread', () => {
  const dirs: string[] = [];
  const open: Checkpointer[] = [];
  afterEach(async () => {
    for (const c of open.splice(0)) await c.stop();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /**
   * A database in WAL mode whose own connection never checkpoints, with `rows` rows written to its log; with
   * `schema`, Ferry's tables first (a click writer's thread prepares its statements on them).
   */
  async function database(rows: number, { schema = false } = {}) {
    const dir = mkdtempSync(path.join(tmpdir(), 'ferry-checkpoint-'));
    dirs.push(dir);
    const file = path.join(dir, 'ferry.db');
    if (schema) {
      const storage = createStorage({ databaseUrl: null, dataDir: dir, dbPoolMax: 1 });
      await migrateToLatest(storage.db as Kysely<unknown>, storage.dialect);
      await storage.close();
    }
    const db = new SqliteDatabase(file);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('create table t (id integer primary key, v text)');
    const insert = db.prepare('insert into t (v) values (?)');
    db.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run('x'.repeat(200));
    })();
    return { file, db };
  }

  it('when it is stopped before its first checkpoint is due, then no thread ever started', async () => {
    const { file, db } = await database(10);
    const errors: string[] = [];
    const c = startSqliteCheckpointer(file, 60_000, (m) => errors.push(m));
    expect(c.started).toBe(false);
    await c.stop();
    expect(c.started).toBe(false);
    expect(errors).toEqual([]);
    db.close();
  });

  it('when the first checkpoint is due, then the thread starts and copies the log into the database file', async () => {
    const { file, db } = await database(2_000);
    // Nothing checkpointed yet: the rows are in the log only, the database file holds none of their pages.
    const before = statSync(file).size;
    const errors: string[] = [];
    const c = startSqliteCheckpointer(file, 50, (m) => errors.push(m));
    open.push(c);
    await waitFor('the thread started', async () => c.started);
    await waitFor('the log copied into the database file', async () => statSync(file).size > before + 200 * 1_000);
    expect(errors).toEqual([]);
    expect(db.prepare('select count(*) as n from t').get()).toEqual({ n: 2_000 });
    db.close();
  });

  it('when the click writer takes the checkpoints over, then it folds the log in, and no thread of their own runs', async () => {
    const { file, db } = await database(2_000, { schema: true });
    const before = statSync(file).size;
    const errors: string[] = [];
    const c = startSqliteCheckpointer(file, 50, (m) => errors.push(m));
    open.push(c);
    // Taken over before the first is due: only the click writer's thread can copy the log into the file.
    const writer = createSqliteClickWriter(file, { checkpoints: c });
    await waitFor('the log copied into the database file', async () => statSync(file).size > before + 200 * 1_000);
    expect(c.started).toBe(false);
    // Stopped, the writer gives them back: their own thread starts when the next one is due.
    await writer.close();
    await waitFor('their own thread started again', async () => c.started);
    // Taken over while their own thread runs: it stops.
    const again = createSqliteClickWriter(file, { checkpoints: c });
    expect(c.started).toBe(false);
    await again.close();
    expect(errors).toEqual([]);
    db.close();
  });
});
