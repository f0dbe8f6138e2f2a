import { readFileSync, unlinkSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import type { WindowProgress } from '../rollups/click-batch.js';
import type { ClickEvent } from '../event/click-event.js';
import type { JournalMark } from '../rollups/click-writer.js';
import { clickOfFields, type KeyedClick } from './click-stream.js';

/**
 * The click journal's start-up (click-journal.ts): reading the segments an earlier process left behind and
 * writing the clicks their journals' marks do not cover, each exactly once.
 */

/**
 * A journal's mark: its clicks before `committed` are in the database, and of a window partly written
 * (sqlite-click-thread.ts), those in [committed, window.end) of links below `window.link`, and the first
 * `window.count` of `window.link`.
 */
export interface JournalProgress {
  committed: number;
  window: (WindowProgress & { end: number }) | null;
}

export interface ReplayOptions {
  log: FastifyBaseLogger;
  /** how far a journal's clicks are in the database (its mark; committed 0 when it has none) */
  committed(journal: string): Promise<JournalProgress>;
  /** writes left-over clicks, the first at `mark.first` of `mark.journal`, moving the mark in the same transactions */
  replay(clicks: ClickEvent[], mark: JournalMark): Promise<void>;
  /** writes left-over keyed clicks (the earlier format) exactly once: the replay-safe writer */
  replayKeyed(clicks: KeyedClick[]): Promise<void>;
}

/**
 * clicks per replayed write, more than a segment holds (about 80,000 lines of 16 MB), so that a segment's run is
 * one write: the embedded writer is cheaper per click the larger its writes. Measured, 1,000,000 clicks left
 * behind over 100,000 links: listening after 57 s with writes of 5,000, 23.5 s with a segment's run at a time.
 */
const REPLAY_CHUNK = 100_000;

/** A journal's clicks at consecutive positions from `first`. */
interface Run {
  journal: string;
  first: number;
  clicks: ClickEvent[];
}

/** What segments hold: runs of positioned clicks, keyed clicks of the earlier format, and lines that are neither. */
export interface SegmentContent {
  runs: Run[];
  keyed: KeyedClick[];
  malformed: number;
}

/** Lines between two yields of the event loop while a segment is read in the background (about 10 ms). */
const LINES_PER_TURN = 4_096;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Reads one segment's lines into `into` (a segment's header sets the journal of the lines after it). */
function segmentReader(into: SegmentContent): (line: string) => void {
  let journal: string | null = null;
  let run: Run | null = null;
  return (line) => {
    if (line === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      // A torn last line: the process died inside that write, before the redirect was answered.
      into.malformed += 1;
      return;
    }
    if (isHeader(v)) {
      journal = v.journal;
      run = null;
      return;
    }
    const position = Array.isArray(v) ? (v[0] as unknown) : undefined;
    const click = clickOfFields(Number.isSafeInteger(position) ? [String(position), ...(v as unknown[]).slice(1)] : v);
    if (click === null || (typeof position === 'number' && journal === null)) {
      into.malformed += 1;
      return;
    }
    if (typeof position !== 'number') {
      into.keyed.push(click);
      return;
    }
    const event: ClickEvent = { ...click };
    delete event.key;
    // A line lost to a failed write leaves a gap: the next run starts at its own position.
    if (run === null || run.first + run.clicks.length !== position) {
      run = { journal: journal!, first: position, clicks: [] };
      into.runs.push(run);
    }
    run.clicks.push(event);
  };
}

/** What one segment holds, letting the event loop run every LINES_PER_TURN lines (the replay runs beside the redirects). */
export async function readSegment(text: string): Promise<SegmentContent> {
  const content: SegmentContent = { runs: [], keyed: [], malformed: 0 };
  const read = segmentReader(content);
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    if (i > 0 && i % LINES_PER_TURN === 0) await nextTurn();
    read(lines[i]!);
  }
  return content;
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
 * million clicks or more can be left behind: CLICK_QUEUE_LIMIT's embedded default), while this process serves:
 * its lines are read a few thousand per event-loop turn, and each write is one message to the writer thread
 * among the live queue's windows. Two passes in segment order: the first reads each journal's mark and gathers
 * the rest of a window partly written (at most a window of clicks), written first as one window again; the
 * second writes, segment by segment, what follows the mark and the window, in chunks.
 *
 * `stopped()` is asked before each write: once it says so (shutdown), the replay ends there and returns false,
 * leaving every segment in place; the marks moved by the writes done make the next start write only the rest.
 * Returns true once every segment is written and deleted.
 */
export async function replayLeftOver(
  opts: ReplayOptions,
  files: readonly string[],
  stopped: () => boolean = () => false,
): Promise<boolean> {
  const r: Replay = { opts, stopped, progress: new Map(), windows: new Map(), replayed: 0, skipped: 0, malformed: 0 };
  await gatherWindows(r, files);
  // A window partly written: the rest of its clicks (in whichever runs) is written first, as one window again.
  for (const [journal, { rest }] of r.windows) {
    if (stopped()) return false;
    const { committed, window: w } = r.progress.get(journal)!;
    if (rest.length > 0)
      await opts.replay(rest, { journal, first: committed, end: w!.end, after: { link: w!.link, count: w!.count } });
    r.replayed += rest.length;
  }
  r.windows.clear();
  const keyed = await writeAfterMarks(r, files);
  if (keyed === null) return false;
  for (let i = 0; i < keyed.length; i += REPLAY_CHUNK) {
    if (stopped()) return false;
    await opts.replayKeyed(keyed.slice(i, i + REPLAY_CHUNK));
  }
  for (const file of files) unlinkSync(file);
  opts.log.info(
    {
      segments: files.length,
      replayed: r.replayed + keyed.length,
      alreadyCommitted: r.skipped,
      malformed: r.malformed,
    },
    'click journal replayed: clicks the database lacked are written',
  );
  return true;
}

/** A replay under way: each journal's progress, the windows partly written, and its counts. */
interface Replay {
  opts: ReplayOptions;
  stopped: () => boolean;
  progress: Map<string, JournalProgress>;
  /** per journal with a window partly written: its uncovered clicks, and how many of the window's link were seen */
  windows: Map<string, { rest: ClickEvent[]; seen: number }>;
  replayed: number;
  skipped: number;
  malformed: number;
}

async function progressOf(r: Replay, journal: string): Promise<JournalProgress> {
  let p = r.progress.get(journal);
  if (p === undefined) {
    r.progress.set(journal, (p = await r.opts.committed(journal)));
    if (p.window !== null) r.windows.set(journal, { rest: [], seen: 0 });
  }
  return p;
}

/** The first pass: each journal's mark, and the clicks of a window partly written that are not committed. */
async function gatherWindows(r: Replay, files: readonly string[]): Promise<void> {
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    // A segment as this process writes them (its header first, and only there): its lines are parsed here
    // only if its journal has a window partly written; the second pass parses every segment.
    const journal = soleJournal(text);
    if (journal !== null && (await progressOf(r, journal)).window === null) continue;
    for (const run of (await readSegment(text)).runs) {
      const p = await progressOf(r, run.journal);
      const w = p.window;
      const into = r.windows.get(run.journal);
      if (w === null || into === undefined) continue;
      for (let i = Math.max(0, p.committed - run.first); i < run.clicks.length && run.first + i < w.end; i += 1) {
        const e = run.clicks[i]!;
        if (e.linkId < w.link || (e.linkId === w.link && into.seen++ < w.count)) r.skipped += 1;
        else into.rest.push(e);
      }
    }
  }
}

/**
 * The second pass: segment by segment, what follows each journal's mark and window, in chunks. Returns the
 * keyed clicks met (written last), or null when stopped.
 */
async function writeAfterMarks(r: Replay, files: readonly string[]): Promise<KeyedClick[] | null> {
  const keyed: KeyedClick[] = [];
  for (const file of files) {
    const segment = await readSegment(readFileSync(file, 'utf8'));
    r.malformed += segment.malformed;
    keyed.push(...segment.keyed);
    for (const run of segment.runs) {
      const { committed, window: w } = r.progress.get(run.journal)!;
      const clamp = (at: number) => Math.min(run.clicks.length, Math.max(0, at - run.first));
      r.skipped += clamp(committed);
      for (let i = clamp(Math.max(committed, w?.end ?? 0)); i < run.clicks.length; i += REPLAY_CHUNK) {
        if (r.stopped()) return null;
        const chunk = run.clicks.slice(i, i + REPLAY_CHUNK);
        await r.opts.replay(chunk, { journal: run.journal, first: run.first + i, end: run.first + i + chunk.length });
        r.replayed += chunk.length;
      }
      // The mark moved with those writes: a later segment repeating these positions (the lines of a write that
      // failed part way on a full disk, written again once it could) skips them.
      const end = run.first + run.clicks.length;
      if (end > committed) r.progress.set(run.journal, { committed: end, window: w });
    }
  }
  return keyed;
}
