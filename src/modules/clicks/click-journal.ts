import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { lockDirectory } from '../../db/directory-lock.js';
import type { WindowProgress } from './click-batch.js';
import type { ClickEvent } from './click-event.js';
import type { ClickQueue, JournalMark } from './click-queue.js';
import { clickOfFields, encodeClickAs, type KeyedClick } from './click-stream.js';

/**
 * The click journal of the embedded engine (SPEC §12): a redirect is answered only once its click is in an
 * append-only file in DATA_DIR, so a process killed with clicks still queued in memory loses none of them.
 *
 * - Writes are batched per event-loop turn: every click enqueued during a turn is one line, and the turn's
 *   lines are one write(2) in the check phase (setImmediate); the redirects of that turn are answered after
 *   it (`settled()`). No fsync: the page cache survives the process, not the machine (README: the window a
 *   machine crash can lose).
 * - Exactly once without a key per click: each process's journal has an id, and each click a position in it
 *   (0, 1, 2, ... in enqueue order, which is also the order the in-process queue commits in). The writer
 *   records, in the transaction that writes a batch, how many of the journal's clicks are committed
 *   (`click_journal_marks`, JournalMark). The embedded writer commits a window link range by link range, so
 *   inside a window the mark also says how far the window got (JournalProgress, sqlite-click-thread.ts). The
 *   start-up replays, of every segment left behind, the clicks the mark does not cover (first the rest of a
 *   window partly written, as one window), under the same mark, so a kill during the replay replays only the
 *   rest; then it forgets every mark.
 *   Measured (bench/ redirect-nojournal): a unique key per click cost the redirect about 5 µs of CPU (the
 *   key's text, its column and its unique index), against nothing for one mark per transaction.
 * - Lines: a segment starts with `{"journal":id,"first":position}`; a click is the Redis stream's encodeClick
 *   array with its position in place of the key. A line of the earlier format (a keyed click) is still
 *   replayed, through the replay-safe writer.
 * - Segments: the queue reports how many clicks (in enqueue order) are committed; a segment whose clicks are
 *   all committed is deleted, and the current one is rotated once everything in it is committed and it holds
 *   ROTATE_BYTES, so the journal holds the queue's backlog and at most that much history.
 */
export interface ClickJournal {
  /** this process's journal: marks name it */
  readonly id: string;
  /** Adds a line to this turn's write. */
  append(click: ClickEvent): void;
  /** Resolves once every line appended so far is written to the file (never rejects); null when none is pending. */
  settled(): Promise<void> | null;
  /** `n` more clicks, in append order, are committed to the database. */
  written(n: number): void;
  /** Writes what is pending and closes the file; deletes it when every click is committed. */
  close(): void;
}

/**
 * A journal's mark: its clicks before `committed` are in the database, and of a window partly written
 * (sqlite-click-thread.ts), those in [committed, window.end) of links below `window.link`, and the first
 * `window.count` of `window.link`.
 */
export interface JournalProgress {
  committed: number;
  window: (WindowProgress & { end: number }) | null;
}

export interface OpenClickJournalOptions {
  dir: string;
  log: FastifyBaseLogger;
  /** how far a journal's clicks are in the database (its mark; committed 0 when it has none) */
  committed(journal: string): Promise<JournalProgress>;
  /** writes left-over clicks, the first at `mark.first` of `mark.journal`, moving the mark in the same transactions */
  replay(clicks: ClickEvent[], mark: JournalMark): Promise<void>;
  /** writes left-over keyed clicks (the earlier format) exactly once: the replay-safe writer */
  replayKeyed(clicks: KeyedClick[]): Promise<void>;
  /** forgets every mark (at start, after the replay: no segment of an earlier process is left) */
  forgetMarks(): Promise<void>;
}

const SEGMENT = /^clicks-(\d{12})\.journal$/;
/**
 * clicks per replayed write, more than a segment holds (about 80,000 lines of 16 MB), so that a segment's run is
 * one write: the embedded writer is cheaper per click the larger its writes. Measured, 1,000,000 clicks left
 * behind over 100,000 links: listening after 57 s with writes of 5,000, 23.5 s with a segment's run at a time.
 */
const REPLAY_CHUNK = 100_000;
/** a segment is closed for new clicks past this size even while some of its clicks wait */
const SEGMENT_BYTES = 16 * 1024 * 1024;
/**
 * a segment whose clicks are all committed is replaced by an empty one from this size on: below it, the file
 * operations (close, open, unlink) would come once per write of the queue, and a replay reads its committed
 * lines only to skip them by the mark (about 1,200 clicks)
 */
const ROTATE_BYTES = 256 * 1024;

const segmentName = (seq: number): string => `clicks-${String(seq).padStart(12, '0')}.journal`;

/** A journal's clicks at consecutive positions from `first`. */
interface Run {
  journal: string;
  first: number;
  clicks: ClickEvent[];
}

/** What the segments left behind hold: runs of positioned clicks, keyed clicks of the earlier format, and lines that are neither. */
export function readSegments(texts: readonly string[]): { runs: Run[]; keyed: KeyedClick[]; malformed: number } {
  const runs: Run[] = [];
  const keyed: KeyedClick[] = [];
  let malformed = 0;
  for (const text of texts) {
    let journal: string | null = null;
    let run: Run | null = null;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        // A torn last line: the process died inside that write, before the redirect was answered.
        malformed += 1;
        continue;
      }
      if (isHeader(v)) {
        journal = v.journal;
        run = null;
        continue;
      }
      const position = Array.isArray(v) ? (v[0] as unknown) : undefined;
      const click = clickOfFields(Number.isSafeInteger(position) ? [String(position), ...(v as unknown[]).slice(1)] : v);
      if (click === null || (typeof position === 'number' && journal === null)) {
        malformed += 1;
        continue;
      }
      if (typeof position !== 'number') {
        keyed.push(click);
        continue;
      }
      const event: ClickEvent = { ...click };
      delete event.key;
      // A line lost to a failed write leaves a gap: the next run starts at its own position.
      if (run === null || run.first + run.clicks.length !== position) {
        run = { journal: journal!, first: position, clicks: [] };
        runs.push(run);
      }
      run.clicks.push(event);
    }
  }
  return { runs, keyed, malformed };
}

const isHeader = (v: unknown): v is { journal: string; first: number } =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { journal?: unknown }).journal === 'string';

/** The journal of a segment whose first line is its header and only header (click lines are arrays), else null. */
function soleJournal(text: string): string | null {
  const end = text.indexOf('\n');
  if (end < 0 || text.includes('\n{', end)) return null;
  try {
    const v: unknown = JSON.parse(text.slice(0, end));
    return isHeader(v) ? v.journal : null;
  } catch {
    return null;
  }
}

/**
 * Replays the segments an earlier process left behind, one segment in memory at a time (a backlog of a
 * million clicks or more can be left behind: CLICK_QUEUE_LIMIT's embedded default). Two passes in segment
 * order: the first reads each journal's mark and gathers the rest of a window partly written (at most a window
 * of clicks), written first as one window again; the second writes, segment by segment, what follows the mark
 * and the window, in chunks.
 */
async function replayLeftOver(opts: OpenClickJournalOptions, files: readonly string[]): Promise<void> {
  const progress = new Map<string, JournalProgress>();
  /** per journal with a window partly written: its uncovered clicks, and how many of the window's link were seen */
  const windows = new Map<string, { rest: ClickEvent[]; seen: number }>();
  const progressOf = async (journal: string): Promise<JournalProgress> => {
    let p = progress.get(journal);
    if (p === undefined) {
      progress.set(journal, (p = await opts.committed(journal)));
      if (p.window !== null) windows.set(journal, { rest: [], seen: 0 });
    }
    return p;
  };
  let replayed = 0;
  let skipped = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    // A segment as this process writes them (its header first, and only there): its lines are parsed here
    // only if its journal has a window partly written; the second pass parses every segment.
    const journal = soleJournal(text);
    if (journal !== null && (await progressOf(journal)).window === null) continue;
    for (const run of readSegments([text]).runs) {
      const p = await progressOf(run.journal);
      const w = p.window;
      const into = windows.get(run.journal);
      if (w === null || into === undefined) continue;
      for (let i = Math.max(0, p.committed - run.first); i < run.clicks.length && run.first + i < w.end; i += 1) {
        const e = run.clicks[i]!;
        if (e.linkId < w.link || (e.linkId === w.link && into.seen++ < w.count)) skipped += 1;
        else into.rest.push(e);
      }
    }
  }
  // A window partly written: the rest of its clicks (in whichever runs) is written first, as one window again.
  for (const [journal, { rest }] of windows) {
    const { committed, window: w } = progress.get(journal)!;
    if (rest.length > 0) await opts.replay(rest, { journal, first: committed, end: w!.end, after: { link: w!.link, count: w!.count } });
    replayed += rest.length;
  }
  windows.clear();
  const keyed: KeyedClick[] = [];
  let malformed = 0;
  for (const file of files) {
    const segment = readSegments([readFileSync(file, 'utf8')]);
    malformed += segment.malformed;
    keyed.push(...segment.keyed);
    for (const run of segment.runs) {
      const { committed, window: w } = progress.get(run.journal)!;
      const clamp = (at: number) => Math.min(run.clicks.length, Math.max(0, at - run.first));
      skipped += clamp(committed);
      for (let i = clamp(Math.max(committed, w?.end ?? 0)); i < run.clicks.length; i += REPLAY_CHUNK) {
        const chunk = run.clicks.slice(i, i + REPLAY_CHUNK);
        await opts.replay(chunk, { journal: run.journal, first: run.first + i, end: run.first + i + chunk.length });
        replayed += chunk.length;
      }
    }
  }
  for (let i = 0; i < keyed.length; i += REPLAY_CHUNK) await opts.replayKeyed(keyed.slice(i, i + REPLAY_CHUNK));
  for (const file of files) unlinkSync(file);
  opts.log.info({ segments: files.length, replayed: replayed + keyed.length, alreadyCommitted: skipped, malformed }, 'click journal replayed: clicks the database lacked are written');
}

/** Replays what an earlier process left behind, then opens a new segment. */
export async function openClickJournal(opts: OpenClickJournalOptions): Promise<ClickJournal> {
  const { dir, log } = opts;
  mkdirSync(dir, { recursive: true });
  // One process per journal directory: a second would replay the first one's live segments (counting their
  // clicks twice) and forget its marks. Held until close(); the OS drops it with a killed process.
  const lock = lockDirectory(dir, 'its click journal belongs to one process, which replays what it finds there at start');
  const leftOver = readdirSync(dir).filter((f) => SEGMENT.test(f)).sort();
  let seq = leftOver.length > 0 ? Number(SEGMENT.exec(leftOver[leftOver.length - 1]!)![1]) + 1 : 1;
  try {
    if (leftOver.length > 0) await replayLeftOver(opts, leftOver.map((f) => path.join(dir, f)));
    // No segment of an earlier process is left: their marks are of no more use (one row per process otherwise).
    await opts.forgetMarks();
  } catch (err) {
    lock.release();
    throw err;
  }

  const id = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  interface Segment {
    file: string;
    fd: number | null;
    bytes: number;
    /** appended clicks, counted over the process, when this segment ends (Infinity: still open) */
    end: number;
  }
  const segments: Segment[] = [];
  let appended = 0;
  let committed = 0;
  /** this turn's lines; a new segment's first write starts with its header */
  let text = '';
  let pending: Promise<void> | null = null;
  let resolvePending: (() => void) | null = null;
  let closed = false;
  let lastFailureLog = Number.NEGATIVE_INFINITY;
  let header = '';

  const open = (): Segment => {
    const file = path.join(dir, segmentName(seq++));
    const s: Segment = { file, fd: openSync(file, 'a'), bytes: 0, end: Number.POSITIVE_INFINITY };
    segments.push(s);
    header = `${JSON.stringify({ journal: id, first: appended })}\n`;
    return s;
  };
  let current = open();

  const flush = (): void => {
    if (pending === null) return;
    const resolve = resolvePending!;
    pending = resolvePending = null;
    const out = header + text;
    text = '';
    try {
      // A string is written as it is encoded: no Buffer per turn. A short write (rare) writes the rest.
      const bytes = Buffer.byteLength(out);
      let wrote = writeSync(current.fd!, out);
      if (wrote < bytes) {
        const rest = Buffer.from(out);
        while (wrote < bytes) wrote += writeSync(current.fd!, rest, wrote);
      }
      header = '';
      current.bytes += bytes;
      if (current.bytes >= SEGMENT_BYTES) rotate();
    } catch (err) {
      // A full or failing disk: the clicks are still queued in memory and the redirects are answered (as
      // during a Redis outage); only a process kill before their flush would lose them. The lines are gone,
      // so the positions in this segment would skip them: the next write starts a new segment with its header.
      if (performance.now() - lastFailureLog >= 60_000) {
        lastFailureLog = performance.now();
        log.error({ err }, 'click journal write failed: clicks are kept in memory only until the disk recovers');
      }
      try {
        rotate();
      } catch {
        // still failing: the next flush tries again
      }
    }
    resolve();
  };

  const rotate = (): void => {
    if (current.fd !== null) closeSync(current.fd);
    current.fd = null;
    current.end = appended;
    current = open();
    release();
  };

  /** Deletes the closed segments whose clicks are all committed. */
  const release = (): void => {
    while (segments.length > 1 && segments[0]!.end <= committed) unlinkSync(segments.shift()!.file);
  };

  return {
    id,
    append(click) {
      if (pending === null) {
        pending = new Promise<void>((resolve) => {
          resolvePending = resolve;
        });
        setImmediate(flush);
      }
      text += `${encodeClickAs(appended, click)}\n`;
      appended += 1;
    },
    settled: () => pending,
    written(n) {
      committed += n;
      release();
      // Everything in the current segment is committed: start an empty one.
      if (!closed && pending === null && committed === appended && current.bytes >= ROTATE_BYTES) rotate();
    },
    close() {
      if (closed) return;
      closed = true;
      flush();
      if (current.fd !== null) closeSync(current.fd);
      current.fd = null;
      current.end = appended;
      segments.push({ file: '', fd: null, bytes: 0, end: Number.POSITIVE_INFINITY }); // lets release() take the last one
      release();
      segments.pop();
      lock.release();
    },
  };
}

/**
 * The in-process queue behind the journal: a click is accepted by the queue (bounded), then journaled at the
 * next position; the redirect waits for `settled()` (links.module.ts) before it answers. The queue is created
 * with the journal's id (click-queue.ts `journal`), so that its writes move the mark.
 */
export function journaledClickQueue(queue: ClickQueue, journal: ClickJournal): ClickQueue {
  return {
    enqueue(event: ClickEvent) {
      if (!queue.enqueue(event)) return false;
      journal.append(event);
      return true;
    },
    settled: () => journal.settled(),
    depth: () => queue.depth(),
    dropped: () => queue.dropped(),
    lastFlushAt: () => queue.lastFlushAt(),
    flush: () => queue.flush(),
    async close() {
      await queue.close();
      journal.close();
    },
  };
}
