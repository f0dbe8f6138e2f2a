import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * The click writer plans its keyed joins as index lookups (Dialect.preferIndexLookups: random_page_cost 1.1
 * for its transaction). The setting must not outlive the transaction: connections are pooled, and every other
 * query keeps the server's planner settings.
 */
describe.runIf(missing.postgres === null)(unless(missing.postgres, 'planner settings on postgres'), () => {
  let t: TestApp | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it("when the click writer's transaction prefers index lookups, then the setting holds inside it and is gone after it", async () => {
    t = await createTestApp('postgres', { env: { DB_POOL_MAX: '1' } });
    const db = t.storage.db;
    const cost = async (q: typeof db) =>
      (await sql<{ random_page_cost: string }>`show random_page_cost`.execute(q)).rows[0]!.random_page_cost;
    const before = await cost(db);
    expect(before).not.toBe('1.1');
    const inside = await db.transaction().execute(async (tx) => {
      await t!.storage.dialect.preferIndexLookups(tx);
      return cost(tx);
    });
    expect(inside).toBe('1.1');
    // One pooled connection: the next query runs on the connection the transaction used.
    expect(await cost(db)).toBe(before);
  });
});
