import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/db/sqlite-driver.js';
import { createSqliteScans, type SqliteScans } from '../../src/db/sqlite-scans.js';

/** Counts to `n` in SQLite (a recursive CTE): a read that keeps its thread busy, the longer the larger `n`. */
const countTo = (n: number) =>
  CompiledQuery.raw(
    'with recursive s(i) as (select 1 union all select i + 1 from s where i < ?) select count(*) as n from s',
    [n],
  );
const one = CompiledQuery.raw('select count(*) as n from t', []);

/**
 * The scans' threads (db/sqlite-scans.ts): reads made together run on threads of their own, side by side, so a
 * search's total cut in parts is read at once; a long read does not hold a short one behind it.
 */
describe('the SQLite scan threads', () => {
  let dir: string;
  let scans: SqliteScans | null = null;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-scans-'));
    const db = new SqliteDatabase(path.join(dir, 'ferry.db'));
    db.pragma('journal_mode = WAL');
    db.exec('create table t (x integer); insert into t values (1), (2), (3)');
    db.close();
  });
  afterEach(async () => {
    await scans?.stop();
    scans = null;
    rmSync(dir, { recursive: true, force: true });
  });

  /** The order in which `long` and then `short`, asked together, answer. */
  async function answerOrder(s: SqliteScans): Promise<string[]> {
    await Promise.all(Array.from({ length: s.width }, () => s.all(one))); // every thread started
    const order: string[] = [];
    const long = s.all(countTo(5_000_000)).then((rows) => order.push(`long ${String((rows[0] as { n: number }).n)}`));
    const short = s.all(one).then((rows) => order.push(`short ${String((rows[0] as { n: number }).n)}`));
    await Promise.all([long, short]);
    return order;
  }

  it('when a long read and a short one are asked together with two threads, then the short one answers first', async () => {
    scans = createSqliteScans(path.join(dir, 'ferry.db'), 2);
    expect(scans.width).toBe(2);
    expect(await answerOrder(scans)).toEqual(['short 3', 'long 5000000']);
  });

  it('when there is one thread, then the reads answer in the order asked', async () => {
    scans = createSqliteScans(path.join(dir, 'ferry.db'), 1);
    expect(await answerOrder(scans)).toEqual(['long 5000000', 'short 3']);
  });

  it('when a read fails, then its promise rejects with the error and the thread answers the next', async () => {
    scans = createSqliteScans(path.join(dir, 'ferry.db'), 2);
    await expect(scans.all(CompiledQuery.raw('select * from nowhere', []))).rejects.toThrow(/no such table/);
    expect(await scans.all(one)).toEqual([{ n: 3 }]);
  });
});
