import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readSegment } from '../../../src/modules/clicks/transport/click-journal-replay.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import {
  journalDir,
  journalLine,
  seedClickRecords,
  seedJournalMark,
  writeJournalSegment,
} from '../../helpers/click-journal.js';
import { createLink, storedClickCounts } from '../../helpers/factories.js';

/**
 * The click journal's exactly-once replay (SPEC §12) without a key per click: each process's journal has an
 * id, each click a position, and the writer moves the journal's mark (click_journal_marks) in the
 * transaction that commits the clicks. The journal is the embedded engine's, so this runs on SQLite only
 * (PostgreSQL's durable path is the Redis stream: test/scaleout).
 */
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0';
const REPLAYED = 'click journal replayed: clicks the database lacked are written';

const line = (position: number | string, linkId: number, code: string, at: number, ip: string): string =>
  journalLine(position, { linkId, shortCode: code, clickedAt: at, ip, userAgent: UA });

const linkOf = (t: TestApp) => createLink(t, { original_url: 'https://example.com/journal' });

const marks = (t: TestApp) => t.storage.db.selectFrom('click_journal_marks').selectAll().execute();

/**
 * Restarts the app on `t`'s DATA_DIR and returns it with its log lines, once the replay of what is left behind
 * (which runs in the background) has ended: the queue's flush() waits for it.
 */
async function restart(t: TestApp): Promise<{ app: TestApp; logs: Array<Record<string, unknown>> }> {
  const stream = new PassThrough();
  const logs: Array<Record<string, unknown>> = [];
  stream.on('data', (chunk: Buffer) => {
    for (const l of chunk.toString().split('\n')) if (l.trim()) logs.push(JSON.parse(l) as Record<string, unknown>);
  });
  const app = await createTestApp('sqlite', { dataDir: t.config.dataDir, logStream: stream });
  await app.app.clickQueue.flush();
  return { app, logs };
}

describe('the click journal on sqlite (the embedded default)', () => {
  it('when redirects are answered and their clicks written, then the journal mark counts them in the same transactions, until the next start forgets it', async () => {
    const t = await createTestApp('sqlite', { env: { CLICK_BATCH_SIZE: '4' } });
    try {
      const link = await linkOf(t);
      for (let i = 0; i < 10; i += 1) expect((await t.request({ url: `/${link.short_code}` })).status).toBe(302);
      await t.app.clickQueue.flush();
      const rows = await marks(t);
      expect(rows).toHaveLength(1);
      expect(Number(rows[0]!.committed)).toBe(10);
      expect(await storedClickCounts(t, link.id)).toEqual({ records: 10, clickCount: 10 });
      // No key per click: the mark is the proof of what is committed.
      const keyed = await t.storage.db
        .selectFrom('clicks')
        .select('click_key')
        .where('link_id', '=', link.id)
        .where('click_key', 'is not', null)
        .execute();
      expect(keyed).toEqual([]);

      // A clean stop leaves nothing to replay, and the next start forgets the mark: no row per process piles up.
      await t.app.close();
      const next = await restart(t);
      try {
        expect(next.logs.some((l) => l.msg === REPLAYED)).toBe(false);
        expect(await marks(next.app)).toEqual([]);
        expect(await storedClickCounts(next.app, link.id)).toEqual({ records: 10, clickCount: 10 });
      } finally {
        await next.app.close();
      }
    } finally {
      await t.close();
    }
  });

  it('when a process left segments behind, then the restart writes the clicks past each mark once, skips the rest, and forgets the marks', async () => {
    const t = await createTestApp('sqlite');
    let again: TestApp | null = null;
    try {
      const link = await linkOf(t);
      const at = t.clock.now();
      await t.app.close();
      // An earlier process: journal "p1" wrote positions 0–4 over two segments, and the database has its first 3;
      // a line of the earlier (keyed) format, and a torn last line.
      await seedJournalMark(t, { journal: 'p1', committed: 3 });
      await seedClickRecords(t, link, at, UA, ['192.0.2.0', '192.0.2.1', '192.0.2.2']);
      const dir = journalDir(t);
      const click = (p: number | string, ip: string) => line(p, link.id, link.short_code, at, ip);
      const firstLines = [click(0, '192.0.2.0'), click(1, '192.0.2.1'), click(2, '192.0.2.2')];
      writeJournalSegment(dir, 1, { journal: 'p1', first: 0 }, firstLines);
      const secondLines = [click(3, '192.0.2.3'), click(4, '192.0.2.4'), click('legacy-key-1', '192.0.2.9')];
      writeJournalSegment(dir, 2, { journal: 'p1', first: 3 }, secondLines, '[5,' + String(link.id));

      const first = await restart(t);
      again = first.app;
      const replayed = first.logs.find((l) => l.msg === REPLAYED);
      expect(replayed).toMatchObject({ segments: 2, replayed: 3, alreadyCommitted: 3, malformed: 1 });
      expect(await storedClickCounts(again, link.id)).toEqual({ records: 6, clickCount: 6 });
      const ips = await again.storage.db
        .selectFrom('clicks')
        .select('ip')
        .where('link_id', '=', link.id)
        .orderBy('ip')
        .execute();
      expect(ips.map((r) => r.ip)).toEqual([
        '192.0.2.0',
        '192.0.2.1',
        '192.0.2.2',
        '192.0.2.3',
        '192.0.2.4',
        '192.0.2.9',
      ]);
      expect(await marks(again)).toEqual([]);
      expect(
        readdirSync(dir).filter((f) => f.startsWith('clicks-000000000001') || f.startsWith('clicks-000000000002')),
      ).toEqual([]);

      // And once only: a second restart finds nothing of it to replay.
      await again.close();
      const second = await restart(t);
      again = second.app;
      expect(second.logs.some((l) => l.msg === REPLAYED)).toBe(false);
      expect(await storedClickCounts(again, link.id)).toEqual({ records: 6, clickCount: 6 });
    } finally {
      await again?.close();
      await t.close();
    }
  });

  it('when a segment repeats positions an earlier one holds (a write that failed part way on a full disk, written again once it could), then each click is written once', async () => {
    const t = await createTestApp('sqlite');
    let again: TestApp | null = null;
    try {
      const link = await linkOf(t);
      const at = t.clock.now();
      await t.app.close();
      const dir = journalDir(t);
      const click = (p: number) => line(p, link.id, link.short_code, at, `192.0.2.${p}`);
      // Positions 0–2 and a fragment of 3 made it before ENOSPC; the next segment holds 2–4 (the held turn again).
      writeJournalSegment(dir, 1, { journal: 'p2', first: 0 }, [click(0), click(1), click(2)], '[3,' + String(link.id));
      writeJournalSegment(dir, 2, { journal: 'p2', first: 2 }, [click(2), click(3), click(4)]);
      const first = await restart(t);
      again = first.app;
      expect(first.logs.find((l) => l.msg === REPLAYED)).toMatchObject({ segments: 2, replayed: 5 });
      expect(await storedClickCounts(again, link.id)).toEqual({ records: 5, clickCount: 5 });
    } finally {
      await again?.close();
      await t.close();
    }
  });

  it.each([1, 2])(
    'when a process was killed inside a window written link by link (the journal in %i segment(s), read one at a time), then the restart writes exactly the clicks its mark does not cover',
    async (segments) => {
      const t = await createTestApp('sqlite');
      let again: TestApp | null = null;
      try {
        const a = await linkOf(t);
        const b = await linkOf(t);
        expect(a.id).toBeLessThan(b.id);
        const at = t.clock.now();
        await t.app.close();
        // Journal "p2": positions 0-5 alternate a, b and were one window; sorted by link, its first transaction
        // committed a's first two clicks (positions 0 and 2). Positions 6 and 7 came after the window.
        const order = [a, b, a, b, a, b, b, a];
        await seedJournalMark(t, { journal: 'p2', committed: 0, window_end: 6, window_link: a.id, window_count: 2 });
        await seedClickRecords(t, a, at, UA, ['192.0.2.0', '192.0.2.2']);
        const dir = journalDir(t);
        // Two segments: the window's clicks span both (positions 0-3 and 4-5), and 6-7 follow it in the second.
        const cut = segments === 1 ? order.length : 4;
        for (const [seq, from, to] of [
          [1, 0, cut],
          [2, cut, order.length],
        ] as const) {
          if (from === to) continue;
          const clicks = order
            .slice(from, to)
            .map((l, i) => line(from + i, l.id, l.short_code, at, `192.0.2.${from + i}`));
          writeJournalSegment(dir, seq, { journal: 'p2', first: from }, clicks);
        }

        const first = await restart(t);
        again = first.app;
        expect(first.logs.find((l) => l.msg === REPLAYED)).toMatchObject({
          segments,
          replayed: 6,
          alreadyCommitted: 2,
          malformed: 0,
        });
        const ipsOf = async (linkId: number) =>
          (
            await again!.storage.db
              .selectFrom('clicks')
              .select('ip')
              .where('link_id', '=', linkId)
              .orderBy('ip')
              .execute()
          ).map((r) => r.ip);
        expect(await ipsOf(a.id)).toEqual(['192.0.2.0', '192.0.2.2', '192.0.2.4', '192.0.2.7']);
        expect(await ipsOf(b.id)).toEqual(['192.0.2.1', '192.0.2.3', '192.0.2.5', '192.0.2.6']);
        expect(await storedClickCounts(again, a.id)).toEqual({ records: 4, clickCount: 4 });
        expect(await storedClickCounts(again, b.id)).toEqual({ records: 4, clickCount: 4 });
        expect(await marks(again)).toEqual([]);
      } finally {
        await again?.close();
        await t.close();
      }
    },
  );

  it('when a second app starts on a DATA_DIR whose journal a running app holds, then it refuses with a clear error and replays nothing; once the first closes, it starts', async () => {
    const t = await createTestApp('sqlite', { env: { CLICK_FLUSH_MS: '60000' } });
    let again: TestApp | null = null;
    try {
      const link = await linkOf(t);
      for (let i = 0; i < 5; i += 1) expect((await t.request({ url: `/${link.short_code}` })).status).toBe(302);
      // Five clicks journaled and queued, none written: a second process replaying them would count them twice.
      await expect(restart(t)).rejects.toThrow(
        /is in use by another Ferry process \(pid \d+\): its click journal belongs to one process.*another DATA_DIR/,
      );
      expect(t.app.clickQueue.status().depth).toBe(5);
      await t.app.close();
      expect(await storedClickCounts(t, link.id)).toEqual({ records: 5, clickCount: 5 });
      const next = await restart(t);
      again = next.app;
      expect(next.logs.some((l) => l.msg === REPLAYED)).toBe(false);
      expect(await storedClickCounts(again, link.id)).toEqual({ records: 5, clickCount: 5 });
    } finally {
      await again?.close();
      await t.close();
    }
  });

  it('when a segment is written, then it starts with its journal header and holds one line per click at consecutive positions', async () => {
    const t = await createTestApp('sqlite', { env: { CLICK_FLUSH_MS: '60000', CLICK_BATCH_SIZE: '100000' } });
    try {
      const link = await linkOf(t);
      for (let i = 0; i < 3; i += 1) expect((await t.request({ url: `/${link.short_code}` })).status).toBe(302);
      const dir = journalDir(t);
      // The segments (the directory also holds the journal's lock: src/db/directory-lock.ts).
      const texts = readdirSync(dir)
        .filter((f) => f.endsWith('.journal'))
        .map((f) => readFileSync(path.join(dir, f), 'utf8'))
        .filter(Boolean);
      expect(texts).toHaveLength(1);
      const { runs, keyed, malformed } = await readSegment(texts[0]!);
      expect({ keyed: keyed.length, malformed }).toEqual({ keyed: 0, malformed: 0 });
      expect(runs).toHaveLength(1);
      expect(runs[0]!.first).toBe(0);
      expect(runs[0]!.clicks.map((c) => c.linkId)).toEqual([link.id, link.id, link.id]);
      expect(runs[0]!.clicks[0]).not.toHaveProperty('key');
    } finally {
      await t.close();
    }
  });
});

describe('readSegment', () => {
  it('when positions skip (a write that failed), then a new run starts at the next position; a positioned line before any header is malformed', async () => {
    const header = JSON.stringify({ journal: 'j', first: 0 });
    const { runs, malformed } = await readSegment(
      [
        line(0, 1, 'a', 1, 'x'),
        header,
        line(0, 1, 'a', 1, 'x'),
        line(1, 1, 'a', 1, 'x'),
        line(4, 1, 'a', 1, 'x'),
        '{not json',
      ].join('\n'),
    );
    expect(runs.map((r) => ({ journal: r.journal, first: r.first, n: r.clicks.length }))).toEqual([
      { journal: 'j', first: 0, n: 2 },
      { journal: 'j', first: 4, n: 1 },
    ]);
    expect(malformed).toBe(2);
  });
});
