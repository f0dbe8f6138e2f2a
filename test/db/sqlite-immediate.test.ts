import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createStorage } from '../../src/db/database.js';
import { SqliteDatabase } from '../../src/db/sqlite-driver.js';

/**
 * The main connection's writes wait for the write lock on a timer, not on the event loop (db/sqlite-immediate.ts):
 * another connection (as the click writer thread's) holds the lock while the main one writes.
 */
describe('embedded engine: a write waiting for the lock', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-immediate-'));
  const storage = createStorage({ databaseUrl: null, dataDir: dir, dbPoolMax: 1 });
  const other = new SqliteDatabase(path.join(dir, 'ferry.db'));
  afterAll(async () => {
    other.close();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when another connection holds the write lock, then a transaction and a plain write wait for it without holding the event loop, and then commit', async () => {
    const { db } = storage;
    await sql`create table t (n integer)`.execute(db);
    other.exec('begin immediate');
    other.exec('insert into t values (1)');
    const inTransaction = db.transaction().execute((tx) =>
      tx
        .insertInto('t' as never)
        .values({ n: 2 } as never)
        .execute(),
    );
    const plain = sql`insert into t values (3)`.execute(db);
    // The event loop turns while both wait: timers fire, and nothing was written yet.
    let turns = 0;
    for (let i = 0; i < 5; i += 1) await new Promise((r) => setTimeout(r, 5)).then(() => (turns += 1));
    expect(turns).toBe(5);
    expect(other.prepare('select count(*) as n from t').get()).toEqual({ n: 1 });
    other.exec('commit');
    await Promise.all([inTransaction, plain]);
    const rows = await sql<{ n: number }>`select n from t order by n`.execute(db);
    expect(rows.rows.map((r) => r.n)).toEqual([1, 2, 3]);
    // busy_timeout is the main connection's own again for its direct users.
    expect(storage.sqlite!.pragma('busy_timeout', { simple: true })).toBe(5000);
  });
});
