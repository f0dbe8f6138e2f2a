import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { createClickParts } from '../../../src/modules/clicks/rollups/pg-click-parts.js';
import { createPgClickWriter } from '../../../src/modules/clicks/rollups/pg-click-writer.js';
import { writeSetsIn } from '../../../src/modules/clicks/rollups/pg-set-writer.js';
import { createReplaySafeClickWriter } from '../../../src/modules/clicks/rollups/replay-safe-click-writer.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';
import { waitFor } from '../../helpers/scale-out.js';
import { missing, unless } from '../../helpers/skip.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

type Link = { id: number; short_code: string };

/** `count` links: the first half owned by one user, the second by another, every third anonymous. */
async function links(t: TestApp, count: number): Promise<Link[]> {
  const owners = [await createUser(t), await createUser(t)];
  const made: Link[] = [];
  for (let i = 0; i < count; i += 1) {
    const owner = i % 3 === 2 ? null : owners[i < count / 2 ? 0 : 1]!;
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: `https://example.com/${i}` },
      ...(owner ? { token: owner.token } : {}),
    });
    expect(res.status, res.text).toBe(201);
    made.push(res.body as Link);
  }
  return made;
}

/** A stream's click (keyed) on `link`, `i` milliseconds after T0, from an address of its own. */
const click = (link: Link, i: number): ClickEvent => ({
  linkId: link.id,
  shortCode: link.short_code,
  clickedAt: T0 + i,
  ip: `10.4.${Math.floor(i / 250)}.${i % 250}`,
  userAgent: AGENT,
  referrer: `https://r${i % 7}.example/`,
  key: randomUUID(),
});

/** The records per key, and each link's counter against its records and its hourly rows. */
async function counted(t: TestApp) {
  const q = async (text: string) => (await sql.raw(text).execute(t.storage.db)).rows as Array<Record<string, unknown>>;
  const keys = await q('select click_key, count(*)::int as n from clicks group by click_key');
  const links = await q(`select l.id, l.click_count::int as counter,
      (select count(*)::int from clicks c where c.link_id = l.id) as records,
      (select coalesce(sum(clicks), 0)::int from link_click_hourly h where h.link_id = l.id) as hourly
    from links l order by l.id`);
  const owners = await q(`select t.user_id, t.links::int, t.clicks::int as totals,
      (select coalesce(sum(clicks), 0)::int from user_click_hourly h where h.user_id = t.user_id) as hourly
    from link_owner_totals t order by t.user_id`);
  return { keys, links, owners };
}

describe.skipIf(missing.postgres !== null)(unless(missing.postgres, 'click batches written in parts'), () => {
  it('when two writers write batches over the same links at once, then each click is recorded and counted once', async () => {
    const t = await createTestApp('postgres');
    try {
      const all = await links(t, 24);
      // Two workers, each with the stream's writer (replay-safe, in parts), and batches that share every link.
      const writers = [0, 1].map(() =>
        createReplaySafeClickWriter({
          db: t.storage.db,
          dialect: t.storage.dialect,
          writer: createPgClickWriter(t.storage, { parts: true }),
        }),
      );
      const batches = [0, 1].map((w) =>
        Array.from({ length: 6 }, (_, b) =>
          Array.from({ length: 200 }, (_, i) => click(all[(i * 7 + b) % all.length]!, w * 100_000 + b * 1_000 + i)),
        ),
      );
      await Promise.all(
        writers.map(async (writer, w) => {
          for (const batch of batches[w]!) await writer.write(batch);
        }),
      );
      const c = await counted(t);
      expect(c.keys).toHaveLength(2 * 6 * 200);
      expect(c.keys.filter((r) => r.n !== 1)).toEqual([]);
      expect(c.links.filter((r) => r.counter !== r.records || r.hourly !== r.records)).toEqual([]);
      expect(c.links.reduce((sum, r) => sum + Number(r.records), 0)).toBe(2 * 6 * 200);
      expect(c.owners).toHaveLength(2);
      expect(c.owners.filter((r) => r.totals !== r.hourly)).toEqual([]);
    } finally {
      await t.close();
    }
  }, 120_000);

  it('when a part fails after another committed, then the batch delivered again counts each click once', async () => {
    const t = await createTestApp('postgres');
    try {
      const all = await links(t, 6);
      const batch = Array.from({ length: 60 }, (_, i) => click(all[i % all.length]!, i));
      let parts = 0;
      const failing = createClickParts(t.storage.db, 2);
      await expect(
        failing.write(batch, async (tx, events) => {
          parts += 1;
          if (parts === 2) throw new Error('the database went away');
          return writeSetsIn(tx, events);
        }),
      ).rejects.toThrow('the database went away');
      const half = await counted(t);
      expect(half.keys).toHaveLength(30); // one part of two: the links of one parity
      // Redelivered (the stream's entries were never acknowledged), through the worker's writer.
      await createReplaySafeClickWriter({
        db: t.storage.db,
        dialect: t.storage.dialect,
        writer: createPgClickWriter(t.storage, { parts: true }),
      }).write(batch);
      const c = await counted(t);
      expect(c.keys).toHaveLength(60);
      expect(c.keys.filter((r) => r.n !== 1)).toEqual([]);
      expect(c.links.map((r) => [r.counter, r.hourly])).toEqual(all.map(() => [10, 10]));
    } finally {
      await t.close();
    }
  }, 60_000);

  it('when another writer holds a part, then the free parts are written first and the held one once it is let go', async () => {
    const t = await createTestApp('postgres');
    const other = new pg.Client(t.config.databaseUrl!);
    try {
      const all = await links(t, 6);
      const batch = Array.from({ length: 60 }, (_, i) => click(all[i % all.length]!, i));
      // Part 0 of 2 (links of even id: not yet seen, so by link), held by another session's transaction.
      await other.connect();
      await other.query('begin');
      await other.query(`select pg_advisory_xact_lock(hashtext('ferry:click-parts'), 0)`);
      const written = createClickParts(t.storage.db, 2).write(batch, writeSetsIn);
      const recordedOf = async (parity: number) => {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from clicks
          where link_id % 2 = ${parity}`.execute(t.storage.db);
        return rows[0]!.n;
      };
      await waitFor('the free part to be written', async () => (await recordedOf(1)) === 30);
      const pid = (await other.query('select pg_backend_pid() as pid')).rows[0].pid as number;
      await waitFor('the writer to wait for the held part', async () => {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and ${pid}::int = any(pg_blocking_pids(pid))`.execute(t.storage.db);
        return rows[0]!.n === 1;
      });
      expect(await recordedOf(0)).toBe(0);
      await other.query('commit');
      await written;
      expect(await recordedOf(0)).toBe(30);
    } finally {
      await other.end().catch(() => undefined);
      await t.close();
    }
  }, 60_000);
});
