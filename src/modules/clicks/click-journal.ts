import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { ClickEvent } from './click-event.js';
import type { ClickQueue } from './click-queue.js';
import { decodeClickJson, encodeClick, type KeyedClick } from './click-stream.js';

/**
 * The click journal of the embedded engine (SPEC §12): a redirect is answered only once its click is in an
 * append-only file in DATA_DIR, so a process killed with clicks still queued in memory loses none of them.
 *
 * - Writes are batched per event-loop turn: every click enqueued during a turn is one line of
 *   encodeClick JSON (the Redis stream's encoding), and the turn's lines are one write(2) in the check phase
 *   (setImmediate); the redirects of that turn are answered after it (`settled()`). No fsync: the page cache
 *   survives the process, not the machine (README: the window a machine crash can lose).
 * - Each click gets a key (`click_key`), increasing within a process so that its index grows at the right
 *   edge. The start-up replays every segment left behind through the replay-safe writer: a click the database
 *   already has is skipped by its key, so each click is counted exactly once.
 * - Segments: the queue reports how many clicks (in enqueue order) are committed; a segment whose clicks are
 *   all committed is deleted, and the current one is rotated once everything in it is committed, so the
 *   journal holds the queue's backlog, not the history.
 */
export interface ClickJournal {
  /** the key of the next click */
  nextKey(): string;
  /** Adds a line to this turn's write. */
  append(click: KeyedClick): void;
  /** Resolves once every line appended so far is written to the file (never rejects); null when none is pending. */
  settled(): Promise<void> | null;
  /** `n` more clicks, in append order, are committed to the database. */
  written(n: number): void;
  /** Writes what is pending and closes the file; deletes it when every click is committed. */
  close(): void;
}

export interface OpenClickJournalOptions {
  dir: string;
  log: FastifyBaseLogger;
  /** writes left-over clicks exactly once (the replay-safe writer) */
  replay(clicks: KeyedClick[]): Promise<void>;
}

const SEGMENT = /^clicks-(\d{12})\.journal$/;
const REPLAY_CHUNK = 5_000;
/** a segment is closed for new clicks past this size even while some of its clicks wait */
const SEGMENT_BYTES = 16 * 1024 * 1024;

const segmentName = (seq: number): string => `clicks-${String(seq).padStart(12, '0')}.journal`;

/** Replays what an earlier process left behind, then opens a new segment. */
export async function openClickJournal(opts: OpenClickJournalOptions): Promise<ClickJournal> {
  const { dir, log } = opts;
  mkdirSync(dir, { recursive: true });
  const leftOver = readdirSync(dir).filter((f) => SEGMENT.test(f)).sort();
  let seq = leftOver.length > 0 ? Number(SEGMENT.exec(leftOver[leftOver.length - 1]!)![1]) + 1 : 1;
  if (leftOver.length > 0) {
    let replayed = 0;
    let malformed = 0;
    for (const file of leftOver) {
      const clicks: KeyedClick[] = [];
      for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
        if (line === '') continue;
        const click = decodeClickJson(line);
        // A torn last line: the process died inside that write, before the redirect was answered.
        if (click) clicks.push(click);
        else malformed += 1;
      }
      for (let i = 0; i < clicks.length; i += REPLAY_CHUNK) await opts.replay(clicks.slice(i, i + REPLAY_CHUNK));
      replayed += clicks.length;
    }
    for (const file of leftOver) unlinkSync(path.join(dir, file));
    log.info({ segments: leftOver.length, replayed, malformed }, 'click journal replayed: clicks the database lacked are written');
  }

  interface Segment {
    file: string;
    fd: number | null;
    bytes: number;
    /** appended clicks, counted over the process, when this segment ends (Infinity: still open) */
    end: number;
  }
  const segments: Segment[] = [];
  const open = (): Segment => {
    const file = path.join(dir, segmentName(seq++));
    const s: Segment = { file, fd: openSync(file, 'a'), bytes: 0, end: Number.POSITIVE_INFINITY };
    segments.push(s);
    return s;
  };
  let current = open();
  let appended = 0;
  let committed = 0;
  let lines: string[] = [];
  let pending: Promise<void> | null = null;
  let resolvePending: (() => void) | null = null;
  let closed = false;
  let lastFailureLog = Number.NEGATIVE_INFINITY;

  const keyPrefix = Date.now().toString(16).padStart(12, '0');
  let keyCounter = 0;

  const flush = (): void => {
    if (lines.length === 0) return;
    const text = lines.join('');
    lines = [];
    const resolve = resolvePending!;
    pending = resolvePending = null;
    try {
      const buffer = Buffer.from(text);
      let off = 0;
      while (off < buffer.length) off += writeSync(current.fd!, buffer, off);
      current.bytes += buffer.length;
      if (current.bytes >= SEGMENT_BYTES) rotate();
    } catch (err) {
      // A full or failing disk: the clicks are still queued in memory and the redirects are answered (as
      // during a Redis outage); only a process kill before their flush would lose them. Logged once a minute.
      if (performance.now() - lastFailureLog >= 60_000) {
        lastFailureLog = performance.now();
        log.error({ err }, 'click journal write failed: clicks are kept in memory only until the disk recovers');
      }
    }
    resolve();
  };

  const rotate = (): void => {
    closeSync(current.fd!);
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
    nextKey: () => `${keyPrefix}-${(keyCounter++).toString(16).padStart(12, '0')}`,
    append(click) {
      if (lines.length === 0) {
        pending = new Promise<void>((resolve) => {
          resolvePending = resolve;
        });
        setImmediate(flush);
      }
      lines.push(`${encodeClick(click)}\n`);
      appended += 1;
    },
    settled: () => pending,
    written(n) {
      committed += n;
      release();
      // Everything in the current segment is committed: start an empty one (cheap: once per flush at most).
      if (!closed && lines.length === 0 && committed === appended && current.bytes > 0) rotate();
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
    },
  };
}

/**
 * The in-process queue behind the journal: a click is accepted by the queue (bounded), then journaled with
 * its key; the redirect waits for `settled()` (links.module.ts) before it answers.
 */
export function journaledClickQueue(queue: ClickQueue, journal: ClickJournal): ClickQueue {
  return {
    enqueue(event: ClickEvent) {
      const click: KeyedClick = { ...event, key: journal.nextKey() };
      if (!queue.enqueue(click)) return false;
      journal.append(click);
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
