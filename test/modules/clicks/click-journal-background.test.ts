import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import {
  journaledClickQueue,
  openClickJournal,
  type OpenClickJournalOptions,
} from '../../../src/modules/clicks/transport/click-journal.js';
import type { JournalMark } from '../../../src/modules/clicks/rollups/click-writer.js';
import { createMemoryClickQueue } from '../../../src/modules/clicks/transport/memory-click-queue.js';
import { TestClock } from '../../helpers/app.js';
import { journalLine, writeJournalSegment } from '../../helpers/click-journal.js';

/**
 * The journal's start-up replay runs in the background (click-journal.ts): the journal is open for this
 * process's clicks before what earlier processes left behind is written, and a shutdown stops the replay
 * between two writes, leaving the rest, under the marks those writes moved, to the next start.
 * Here against the journal itself, with a writer that records and can be held; the app-level replays (a
 * real database, the marks in its transactions) are in click-journal.test.ts and sigkill-journal.test.ts.
 */
const fakeLog = () => {
  const log = {
    warn: vi.fn(),
    error: vi.fn(),
    info: vi.fn(),
    debug: vi.fn(),
    trace: vi.fn(),
    fatal: vi.fn(),
    child: () => log,
    level: 'info',
  };
  return log as typeof log & FastifyBaseLogger;
};

const line = (position: number): string =>
  journalLine(position, {
    linkId: 1,
    shortCode: 'abc',
    clickedAt: 1_700_000_000_000 + position,
    ip: '192.0.2.1',
    userAgent: 'curl/8',
  });

/** Journal "p1", positions 0-8 in three segments of three. */
function leaveSegments(dir: string): void {
  for (let s = 0; s < 3; s += 1) {
    writeJournalSegment(dir, s + 1, { journal: 'p1', first: 3 * s }, [line(3 * s), line(3 * s + 1), line(3 * s + 2)]);
  }
}

/** A database as the journal sees it: each replayed write moves its journal's mark, as the writer's transaction does. */
function fakeDatabase() {
  const marks = new Map<string, number>();
  const written: number[] = [];
  const forgotten: string[] = [];
  /** replayed writes begun */
  let begun = 0;
  let hold: Promise<void> | null = null;
  let release = (): void => {};
  const options = (dir: string, log = fakeLog()): OpenClickJournalOptions => ({
    dir,
    log,
    committed: async (journal) => ({ committed: marks.get(journal) ?? 0, window: null }),
    async replay(clicks: ClickEvent[], mark: JournalMark) {
      begun += 1;
      if (hold) await hold;
      written.push(...clicks.map((c) => c.clickedAt - 1_700_000_000_000));
      marks.set(mark.journal, mark.end);
    },
    replayKeyed: async () => undefined,
    async forgetMarks(keep) {
      for (const j of [...marks.keys()]) if (j !== keep) marks.delete(j);
      forgotten.push(keep);
    },
  });
  return {
    marks,
    written,
    forgotten,
    options,
    begun: () => begun,
    /** the next writes wait until released */
    holdWrites() {
      hold = new Promise(
        (resolve) =>
          (release = () => {
            hold = null;
            resolve();
          }),
      );
    },
    release: () => release(),
  };
}

const dirs: string[] = [];
const freshDir = (): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-journal-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the click journal replays in the background', () => {
  it('when segments are left behind, then the journal is open and takes clicks before their replay has written anything', async () => {
    const dir = freshDir();
    leaveSegments(dir);
    const db = fakeDatabase();
    db.holdWrites();
    const journal = await openClickJournal(db.options(dir));
    // what /metrics reads (ferry_click_journal_replaying) through the queue
    const queue = journaledClickQueue(
      createMemoryClickQueue({
        writer: { write: async () => undefined },
        flushMs: 60_000,
        batchSize: 10,
        limit: 100,
        log: fakeLog(),
        clock: new TestClock(),
      }),
      journal,
    );
    try {
      expect(journal.replaying()).toBe(true);
      expect(queue.status().journalReplaying).toBe(true);
      expect(db.written).toEqual([]);
      // this process's clicks go to a segment of its own, after the ones left behind
      journal.append({ linkId: 1, shortCode: 'abc', clickedAt: 1, ip: null, userAgent: null, referrer: null });
      await journal.settled();
      expect(
        readdirSync(dir)
          .filter((f) => f.endsWith('.journal'))
          .sort(),
      ).toEqual([
        'clicks-000000000001.journal',
        'clicks-000000000002.journal',
        'clicks-000000000003.journal',
        'clicks-000000000004.journal',
      ]);

      db.release();
      await journal.replayed();
      expect(journal.replaying()).toBe(false);
      expect(queue.status().journalReplaying).toBe(false);
      expect(db.written).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      // the earlier process's segments are gone and its mark forgotten; this process's segment stays
      expect(readdirSync(dir).filter((f) => f.endsWith('.journal'))).toEqual(['clicks-000000000004.journal']);
      expect(db.forgotten).toEqual([journal.id]);
      expect([...db.marks.keys()]).toEqual([]);
    } finally {
      await queue.close(); // closes the journal too
    }
  });

  it('when the process shuts down during the replay, then it stops after the write in progress and the next start writes only the rest, each click once', async () => {
    const dir = freshDir();
    leaveSegments(dir);
    const db = fakeDatabase();
    db.holdWrites();
    const log = fakeLog();
    const first = await openClickJournal(db.options(dir, log));
    // The first write (segment 1) is in progress when the shutdown comes.
    await vi.waitFor(() => expect(db.begun()).toBe(1));
    const stopped = first.stopReplay();
    db.release();
    await stopped;
    first.close();
    expect(db.written).toEqual([0, 1, 2]);
    expect(db.marks.get('p1')).toBe(3);
    expect(db.forgotten).toEqual([]); // not every segment is written: the marks are still needed
    expect(log.info).toHaveBeenCalledWith(
      'click journal: replay stopped by the shutdown; the next start writes the rest',
    );
    expect(
      readdirSync(dir).filter((f) => f.startsWith('clicks-00000000000') && Number(f.slice(6, 18)) <= 3),
    ).toHaveLength(3);

    const second = await openClickJournal(db.options(dir));
    try {
      await second.replayed();
      expect(db.written).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      expect(db.forgotten).toEqual([second.id]);
      expect(readdirSync(dir).filter((f) => f.endsWith('.journal'))).toHaveLength(1); // the second process's own
    } finally {
      second.close();
    }
  });

  it('when the replay fails, then the segments and marks stay for the next start, data_fresh_as_of stays held, and the journal keeps taking clicks', async () => {
    const dir = freshDir();
    leaveSegments(dir);
    const db = fakeDatabase();
    const log = fakeLog();
    const options = db.options(dir, log);
    const journal = await openClickJournal({
      ...options,
      replay: async () => {
        throw new Error('disk I/O error');
      },
    });
    try {
      await journal.replayed();
      // the statistics lack the earlier clicks until the next start: still "replaying" (freshness held, the gauge 1)
      expect(journal.replaying()).toBe(true);
      expect(log.error).toHaveBeenCalledWith(
        expect.objectContaining({ err: expect.any(Error) }),
        'click journal replay failed: the next start writes what the database lacks',
      );
      expect(db.forgotten).toEqual([]);
      expect(readdirSync(dir).filter((f) => f.endsWith('.journal'))).toHaveLength(4);
      journal.append({ linkId: 1, shortCode: 'abc', clickedAt: 1, ip: null, userAgent: null, referrer: null });
      await journal.settled();
    } finally {
      journal.close();
    }
  });
});
