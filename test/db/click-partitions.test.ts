import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  dropExpiredClickPartitions,
  ensureClickPartitions,
  monthStart,
  partitionName,
} from '../../src/db/click-partitions.js';
import { createStorage } from '../../src/db/database.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrator.js';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import { clickWriterFor } from '../../src/modules/clicks/click-ingest.js';
import { createTestApp, freshPostgresDatabase, type TestApp } from '../helpers/app.js';
import { missing, unless } from '../helpers/skip.js';
import { createLink } from '../helpers/factories.js';

const DAY = 86_400_000;

/** Monthly range partitions of the click table on PostgreSQL (migration 005, db/click-partitions.ts). */
describe.runIf(missing.postgres === null)(unless(missing.postgres, 'click partitions on postgres'), () => {
  const opened: TestApp[] = [];
  afterEach(async () => {
    for (const t of opened.splice(0)) await t.close();
  });
  async function app(): Promise<TestApp> {
    const t = await createTestApp('postgres');
    opened.push(t);
    return t;
  }
  const db = (t: TestApp) => t.storage.db as unknown as Kysely<unknown>;
  async function linkWithClicksAt(t: TestApp, times: number[]): Promise<number> {
    const link = await createLink(t, { original_url: 'https://example.com/p' });
    const events: ClickEvent[] = times.map((clickedAt) => ({
      linkId: link.id,
      shortCode: link.short_code,
      clickedAt,
      ip: '192.0.2.1',
      userAgent: null,
      referrer: null,
    }));
    await clickWriterFor(t.storage).writer.write(events);
    return link.id as number;
  }
  const partitionsOf = async (t: TestApp, linkId: number) =>
    (
      await sql<{
        p: string;
        n: number;
      }>`select tableoid::regclass::text as p, count(*)::int as n from clicks where link_id = ${linkId} group by 1 order by 1`.execute(
        t.storage.db,
      )
    ).rows;

  it('when the app has migrated, then this month and the next three have partitions, and a click lands in its month', async () => {
    const t = await app();
    const now = Date.now();
    const names = (
      await sql<{ name: string }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'clicks'::regclass`.execute(t.storage.db)
    ).rows.map((r) => r.name);
    for (let i = 0; i <= 3; i += 1) expect(names).toContain(partitionName(monthStart(now, i)));
    expect(names).toContain('clicks_default');
    const linkId = await linkWithClicksAt(t, [now, now + 1]);
    expect(await partitionsOf(t, linkId)).toEqual([{ p: partitionName(monthStart(now)), n: 2 }]);
  });

  it('when clicks arrived for a month without a partition, then they wait in the default partition and move when the job prepares it', async () => {
    const t = await app();
    const later = monthStart(Date.now(), 8) + 3 * DAY;
    const linkId = await linkWithClicksAt(t, [later, later + 1, later + 2]);
    expect(await partitionsOf(t, linkId)).toEqual([{ p: 'clicks_default', n: 3 }]);
    const created = await ensureClickPartitions(db(t), later);
    expect(created).toContain(partitionName(monthStart(later)));
    expect(await partitionsOf(t, linkId)).toEqual([{ p: partitionName(monthStart(later)), n: 3 }]);
    expect(await ensureClickPartitions(db(t), later)).toEqual([]); // idempotent
  });

  it('when retention is set, then whole months older than it are dropped, and counters and rollups stay', async () => {
    const t = await app();
    const old = monthStart(Date.now(), -14) + DAY;
    await ensureClickPartitions(db(t), old); // months prepared back then
    const linkId = await linkWithClicksAt(t, [old, old + 1, Date.now()]);
    const dropped = await dropExpiredClickPartitions(db(t), Date.now(), 12);
    expect(dropped).toContain(partitionName(monthStart(old)));
    expect(dropped).not.toContain(partitionName(monthStart(Date.now(), -12)));
    expect(await partitionsOf(t, linkId)).toEqual([{ p: partitionName(monthStart(Date.now())), n: 1 }]);
    const row = await t.storage.db
      .selectFrom('links')
      .select('click_count')
      .where('id', '=', linkId)
      .executeTakeFirstOrThrow();
    expect(row.click_count).toBe(3);
    const hourly = await t.storage.db
      .selectFrom('link_click_hourly')
      .select((eb) => eb.fn.sum<number>('clicks').as('n'))
      .where('link_id', '=', linkId)
      .executeTakeFirstOrThrow();
    expect(Number(hourly.n)).toBe(3);
    expect(await dropExpiredClickPartitions(db(t), Date.now(), 0)).toEqual([]); // 0 keeps everything
  });

  it('when a database with click records from before 005 is migrated, then every record keeps its id in its month and new ids continue after them', async () => {
    const fresh = await freshPostgresDatabase();
    const storage = createStorage(loadConfig({ DATABASE_URL: fresh.url }));
    try {
      const k = storage.db as unknown as Kysely<unknown>;
      await migrateUpTo(k, storage.dialect, '004-links');
      await sql`insert into link_codes (code) values ('old1')`.execute(k);
      await sql`insert into links (short_code, original_url, created_at) values ('old1', 'https://example.com/old', 0)`.execute(
        k,
      );
      const may = Date.UTC(2026, 4, 31, 23, 59, 59, 999);
      const june = Date.UTC(2026, 5, 1);
      await sql`insert into clicks (link_id, short_code, clicked_at) values (1, 'old1', ${may}), (1, 'old1', ${june}), (1, 'old1', ${june + 1})`.execute(
        k,
      );
      await migrateToLatest(k, storage.dialect);
      const rows = (
        await sql<{ id: number; p: string }>`select id, tableoid::regclass::text as p from clicks order by id`.execute(
          k,
        )
      ).rows;
      expect(rows).toEqual([
        { id: 1, p: 'clicks_p202605' },
        { id: 2, p: 'clicks_p202606' },
        { id: 3, p: 'clicks_p202606' },
      ]);
      const next = await sql<{
        id: number;
      }>`insert into clicks (link_id, short_code, clicked_at) values (1, 'old1', ${june}) returning id`.execute(k);
      expect(next.rows[0]!.id).toBe(4);
    } finally {
      await storage.close();
      await fresh.drop();
    }
  });
});
