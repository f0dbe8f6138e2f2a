import { closeSync, readdirSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { ClickEvent } from '../event/click-event.js';
import { openPrivate } from '../../../lib/private-files.js';
import { encodeClickAs } from './click-stream.js';

const SEGMENT = /^clicks-(\d{12})\.journal$/;

/** Where the embedded engine's click journal lives in DATA_DIR (a backup copies its segments). */
export const clickJournalDir = (dataDir: string): string => path.join(dataDir, 'click-journal');

/** Whether a file of the journal directory is a segment (the directory also holds its lock). */
export const isJournalSegment = (name: string): boolean => SEGMENT.test(name);
/** a segment is closed for new clicks past this size even while some of its clicks wait */
const SEGMENT_BYTES = 16 * 1024 * 1024;
/**
 * a segment whose clicks are all committed is replaced by an empty one from this size on: below it, the file
 * operations (close, open, unlink) would come once per write of the queue, and a replay reads its committed
 * lines only to skip them by the mark (about 1,200 clicks)
 */
const ROTATE_BYTES = 256 * 1024;
/** at most one line a minute about a failing disk */
const FAILURE_LOG_INTERVAL_MS = 60_000;

const segmentName = (seq: number): string => `clicks-${String(seq).padStart(12, '0')}.journal`;

/** The segments in `dir` (an earlier process's, at start), oldest first. */
export const segmentsIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter(isJournalSegment)
    .sort()
    .map((f) => path.join(dir, f));

interface Segment {
  file: string;
  fd: number | null;
  bytes: number;
  /** appended clicks, counted over the process, when this segment ends (Infinity: still open) */
  end: number;
}

/**
 * This process's segment files of the click journal (click-journal.ts): the lines of an event-loop turn as one
 * write(2) in the check phase, a segment rotated and deleted once its clicks are committed. A segment starts
 * with `{"journal":id,"first":position}`; a click is the Redis stream's encodeClick array with its position in
 * place of the key.
 */
export class JournalSegments {
  private readonly segments: Segment[] = [];
  private current: Segment;
  private seq: number;
  private appended = 0;
  private committed = 0;
  /** this turn's lines */
  private text = '';
  /** the current segment has no line yet: its first write starts with its header */
  private headerDue = false;
  /**
   * Turns whose write failed (a full disk), oldest first, with their first position: written ahead of the next
   * turn once a write succeeds again (SPEC §17: the held clicks are journaled once space returns), dropped as
   * soon as the database has them. They are consecutive, and end where the next turn starts.
   */
  private held: Array<{ first: number; clicks: number; text: string }> = [];
  private pending: Promise<void> | null = null;
  private resolvePending: (() => void) | null = null;
  private closed = false;
  private lastFailureLog = Number.NEGATIVE_INFINITY;
  /** clicks in this turn's lines */
  private turnClicks = 0;
  /** the last write failed (a full disk): the clicks since are held in the queue's memory only */
  private failing = false;
  /** clicks whose lines could not be written, since start */
  private unjournaled = 0;

  /** `leftOver`: an earlier process's segments, which this one's numbers follow. */
  constructor(
    private readonly dir: string,
    private readonly id: string,
    leftOver: readonly string[],
    private readonly log: FastifyBaseLogger,
  ) {
    const last = leftOver[leftOver.length - 1];
    this.seq = last === undefined ? 1 : Number(SEGMENT.exec(path.basename(last))![1]) + 1;
    this.current = this.open();
  }

  /** Adds a line to this turn's write. */
  append(click: ClickEvent): void {
    if (this.pending === null) {
      this.pending = new Promise<void>((resolve) => {
        this.resolvePending = resolve;
      });
      setImmediate(this.flush);
    }
    this.text += `${encodeClickAs(this.appended, click)}\n`;
    this.appended += 1;
    this.turnClicks += 1;
  }

  /** Whether the last write failed, and how many clicks' lines could not be written since start. */
  health(): { degraded: boolean; unjournaled: number } {
    return { degraded: this.failing, unjournaled: this.unjournaled };
  }

  /** Resolves once every line appended so far is written to the file (never rejects); null when none is pending. */
  settled(): Promise<void> | null {
    return this.pending;
  }

  /** `n` more clicks, in append order, are committed to the database. */
  written(n: number): void {
    this.committed += n;
    while (this.held.length > 0 && this.held[0]!.first + this.held[0]!.clicks <= this.committed) this.held.shift();
    this.release();
    // Everything in the current segment is committed: start an empty one.
    if (!this.closed && this.pending === null && this.committed === this.appended && this.current.bytes >= ROTATE_BYTES)
      this.rotate();
  }

  /** Writes what is pending and closes the file; deletes it when every click is committed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    this.end(this.current);
    this.segments.push({ file: '', fd: null, bytes: 0, end: Number.POSITIVE_INFINITY }); // lets release() take the last one
    this.release();
    this.segments.pop();
  }

  private open(): Segment {
    const file = path.join(this.dir, segmentName(this.seq++));
    const s: Segment = { file, fd: openPrivate(file, 'a', true), bytes: 0, end: Number.POSITIVE_INFINITY };
    this.segments.push(s);
    this.headerDue = true;
    return s;
  }

  private readonly flush = (): void => {
    if (this.pending === null) return;
    const resolve = this.resolvePending!;
    this.pending = this.resolvePending = null;
    const clicks = this.turnClicks;
    const turn = { first: this.appended - clicks, clicks, text: this.text };
    this.text = '';
    this.turnClicks = 0;
    try {
      // The last write failed and starting a new segment then failed too: start it now, past the fragment.
      if (this.failing && !this.headerDue) this.rotate();
      this.write(this.lines(turn));
      if (this.held.length > 0) this.held = [];
      this.failing = false;
    } catch (err) {
      this.failing = true;
      this.unjournaled += clicks;
      this.held.push(turn);
      this.failed(err);
    }
    resolve();
  };

  /** What a write puts in the file: the header of a new segment, the held turns' lines, this turn's. */
  private lines(turn: { first: number; text: string }): string {
    const first = this.held[0]?.first ?? turn.first;
    const header = this.headerDue ? `${JSON.stringify({ journal: this.id, first })}\n` : '';
    return this.held.length === 0 ? header + turn.text : header + this.held.map((h) => h.text).join('') + turn.text;
  }

  /** A string is written as it is encoded: no Buffer per turn. A short write (rare) writes the rest. */
  private write(out: string): void {
    const bytes = Buffer.byteLength(out);
    let wrote = writeSync(this.current.fd!, out);
    if (wrote < bytes) {
      const rest = Buffer.from(out);
      while (wrote < bytes) wrote += writeSync(this.current.fd!, rest, wrote);
    }
    this.headerDue = false;
    this.current.bytes += bytes;
    if (this.current.bytes >= SEGMENT_BYTES) this.rotate();
  }

  /**
   * A full or failing disk: the clicks are still queued in memory and the redirects are answered (as during a
   * Redis outage); until a write succeeds again (which writes their lines first), a process kill before their
   * flush would lose them. A new segment is started, since what was written of the failed lines may be a
   * fragment.
   */
  private failed(err: unknown): void {
    if (performance.now() - this.lastFailureLog >= FAILURE_LOG_INTERVAL_MS) {
      this.lastFailureLog = performance.now();
      this.log.error({ err }, 'click journal write failed: clicks are kept in memory only until the disk recovers');
    }
    try {
      this.rotate();
    } catch {
      // still failing: the next flush tries again
    }
  }

  private end(segment: Segment): void {
    if (segment.fd !== null) closeSync(segment.fd);
    segment.fd = null;
    segment.end = this.appended;
  }

  private rotate(): void {
    this.end(this.current);
    this.current = this.open();
    this.release();
  }

  /** Deletes the closed segments whose clicks are all committed. */
  private release(): void {
    while (this.segments.length > 1 && this.segments[0]!.end <= this.committed) unlinkSync(this.segments.shift()!.file);
  }
}
