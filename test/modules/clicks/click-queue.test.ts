import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import type { ClickBatch } from '../../../src/modules/clicks/rollups/click-batch.js';
import type { JournalMark } from '../../../src/modules/clicks/rollups/click-writer.js';
import { createMemoryClickQueue } from '../../../src/modules/clicks/transport/memory-click-queue.js';
import { TestClock } from '../../helpers/app.js';

const event = (i: number): ClickEvent => ({
  linkId: 1,
  shortCode: 'abc',
  clickedAt: i,
  ip: '127.0.0.1',
  userAgent: null,
  referrer: null,
});

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

const recordingWriter = () => {
  const batches: ClickEvent[][] = [];
  return {
    batches,
    written: () => batches.flat(),
    write: async (b: readonly ClickEvent[]) => void batches.push([...b]),
  };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('in-memory click queue', () => {
  it('when the queue is full, then further clicks are dropped, counted and logged, and depth stays at the bound', async () => {
    const log = fakeLog();
    const q = createMemoryClickQueue({
      writer: recordingWriter(),
      flushMs: 60_000,
      batchSize: 1000,
      limit: 5,
      log,
      clock: new TestClock(),
    });
    const accepted = Array.from({ length: 8 }, (_, i) => q.enqueue(event(i)));
    expect(accepted).toEqual([true, true, true, true, true, false, false, false]);
    expect(q.status().depth).toBe(5);
    expect(q.status().dropped).toBe(3);
    expect(log.warn).toHaveBeenCalledTimes(1); // throttled: one warning for the burst
    await q.close();
  });

  it('when a batch fills up, then it is written without waiting for the timer, and no write is larger than the batch size', async () => {
    const w = recordingWriter();
    const q = createMemoryClickQueue({
      writer: w,
      flushMs: 60_000,
      batchSize: 4,
      limit: 100,
      log: fakeLog(),
      clock: new TestClock(),
    });
    for (let i = 0; i < 10; i += 1) q.enqueue(event(i));
    await sleep(20);
    expect(w.written().length).toBeGreaterThanOrEqual(8);
    expect(Math.max(...w.batches.map((b) => b.length))).toBeLessThanOrEqual(4);
    await q.close();
    expect(w.written().map((e) => e.clickedAt)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('when the flush interval passes, then queued clicks are written and the time of the write is known', async () => {
    const w = recordingWriter();
    const clock = new TestClock(1_000);
    const q = createMemoryClickQueue({ writer: w, flushMs: 20, batchSize: 1000, limit: 100, log: fakeLog(), clock });
    expect(q.status().lastFlushAt).toBeNull();
    q.enqueue(event(1));
    await sleep(80);
    expect(w.written()).toHaveLength(1);
    expect(q.status().depth).toBe(0);
    expect(q.status().lastFlushAt).toBe(1_000);
    await q.close();
  });

  it('when the timer fires on an empty queue, then later clicks are still written (no wedged drain)', async () => {
    const w = recordingWriter();
    const q = createMemoryClickQueue({
      writer: w,
      flushMs: 10,
      batchSize: 1000,
      limit: 100,
      log: fakeLog(),
      clock: new TestClock(),
    });
    await sleep(40);
    q.enqueue(event(1));
    await q.flush();
    expect(w.written()).toHaveLength(1);
    await q.close();
  });

  it('when a write fails, then the batch stays queued, flush rejects, and a later flush writes every click once', async () => {
    const w = recordingWriter();
    let failing = true;
    const log = fakeLog();
    const q = createMemoryClickQueue({
      writer: {
        write: async (b) => {
          if (failing) throw new Error('db down');
          await w.write(b);
        },
      },
      flushMs: 60_000,
      batchSize: 3,
      limit: 100,
      log,
      clock: new TestClock(),
    });
    for (let i = 0; i < 7; i += 1) q.enqueue(event(i));
    await expect(q.flush()).rejects.toThrow(/still queued/);
    expect(q.status().depth).toBe(7);
    expect(log.error).toHaveBeenCalled();
    failing = false;
    await q.flush();
    expect(w.written().map((e) => e.clickedAt)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    await q.close();
  });

  it('when the queue is closed, then everything queued is written, and later clicks are dropped', async () => {
    const w = recordingWriter();
    const q = createMemoryClickQueue({
      writer: w,
      flushMs: 60_000,
      batchSize: 2,
      limit: 100,
      log: fakeLog(),
      clock: new TestClock(),
    });
    for (let i = 0; i < 5; i += 1) q.enqueue(event(i));
    await q.close();
    expect(w.written()).toHaveLength(5);
    expect(q.enqueue(event(9))).toBe(false);
    expect(q.status().dropped).toBe(1);
  });

  it('when clicks arrive while a write is in progress, then flush waits and writes them too', async () => {
    const w = recordingWriter();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let first = true;
    const q = createMemoryClickQueue({
      writer: {
        write: async (b) => {
          if (first) {
            first = false;
            await gate;
          }
          await w.write(b);
        },
      },
      flushMs: 60_000,
      batchSize: 1000,
      limit: 100,
      log: fakeLog(),
      clock: new TestClock(),
    });
    q.enqueue(event(1));
    const inFlight = q.flush();
    q.enqueue(event(2));
    const second = q.flush();
    release();
    await Promise.all([inFlight, second]);
    expect(w.written().map((e) => e.clickedAt)).toEqual([1, 2]);
    await q.close();
  });

  it('when the writer takes windows, then clicks are gathered in windows, a write holds one, and a window that failed part way is written again alone with where it got to; while the journal replays, its windows hold data_fresh_as_of', async () => {
    const writes: Array<{ clicks: number[]; mark: JournalMark | undefined; capacity: number }> = [];
    let failNext = false;
    const writer = {
      window: 10,
      write: async () => {
        throw new Error('a window writer gets batches');
      },
      writeBatch: async (batch: ClickBatch, mark?: JournalMark) => {
        writes.push({ clicks: batch.toEvents().map((e) => e.clickedAt), mark, capacity: batch.capacity });
        if (failNext) {
          failNext = false;
          // committed: the first two clicks of link 1 (sqlite-click-thread.ts answers how far it got)
          batch.dropWritten(1, 2);
          throw new Error('disk on fire');
        }
      },
    };
    const written: number[] = [];
    // While the journal replays an earlier process's clicks, its windows hold data_fresh_as_of back.
    let replaying = true;
    const q = createMemoryClickQueue({
      writer,
      flushMs: 60_000,
      batchSize: 3,
      limit: 100,
      log: fakeLog(),
      clock: new TestClock(),
      journal: 'j',
      onWritten: (n) => written.push(n),
      holdFresh: () => replaying,
    });
    // The size trigger is the window (10), not CLICK_BATCH_SIZE (3).
    for (let i = 0; i < 9; i += 1) q.enqueue(event(i));
    await sleep(5);
    expect(writes).toEqual([]);
    for (let i = 9; i < 14; i += 1) q.enqueue(event(i));
    await sleep(5);
    // One window, gathered as it came (its batch is the window): 0-9. The rest is less than a window: it waits
    // for the timer (or a flush), so that windows do not shrink to what arrives during a write.
    expect(writes).toEqual([
      {
        clicks: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        mark: { journal: 'j', first: 0, end: 10, holdFresh: true },
        capacity: 10,
      },
    ]);
    expect(written).toEqual([10]);
    replaying = false;
    await q.flush();
    expect(writes[1]).toEqual({ clicks: [10, 11, 12, 13], mark: { journal: 'j', first: 10, end: 14 }, capacity: 10 });
    expect(written).toEqual([10, 4]);

    for (let i = 14; i < 19; i += 1) q.enqueue(event(i));
    failNext = true;
    await expect(q.flush()).rejects.toThrow(/still queued/);
    expect(writes[2]).toEqual({
      clicks: [14, 15, 16, 17, 18],
      mark: { journal: 'j', first: 14, end: 19 },
      capacity: 10,
    });
    // Nothing counts as committed in the journal until the whole window is.
    expect(written).toEqual([10, 4]);
    expect(q.status().depth).toBe(3);
    for (let i = 19; i < 21; i += 1) q.enqueue(event(i));
    await q.flush();
    // The rest of the window alone, marked with its span and where it got to; then the newer clicks.
    expect(writes.slice(3)).toEqual([
      { clicks: [16, 17, 18], mark: { journal: 'j', first: 14, end: 19, after: { link: 1, count: 2 } }, capacity: 10 },
      { clicks: [19, 20], mark: { journal: 'j', first: 19, end: 21 }, capacity: 10 },
    ]);
    expect(written).toEqual([10, 4, 5, 2]);
    await q.close();
  });
});
