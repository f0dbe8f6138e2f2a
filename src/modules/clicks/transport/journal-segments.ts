import { closeSync, openSync, readdirSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { ClickEvent } from '../event/click-event.js';
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
  readdirSync(dir).filter(isJournalSegment).sort().map((f) => path.join(dir, f));

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
  /** this turn's lines; a new segment's first write starts with its header */
  private text = '';
  private header = '';
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
  constructor(private readonly dir: string, private readonly id: string, leftOver: readonly string[], private readonly log: FastifyBaseLogger) {
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
    this.release();
    // Everything in the current segment is committed: start an empty one.
    if (!this.closed && this.pending === null && this.committed === this.appended && this.current.bytes >= ROTATE_BYTES) this.rotate();
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
    const s: Segment = { file, fd: openSync(file, 'a'), bytes: 0, end: Number.POSITIVE_INFINITY };
    this.segments.push(s);
    this.header = `${JSON.stringify({ journal: this.id, first: this.appended })}\n`;
    return s;
  }

  private readonly flush = (): void => {
    if (this.pending === null) return;
    const resolve = this.resolvePending!;
    this.pending = this.resolvePending = null;
    const out = this.header + this.text;
    const clicks = this.turnClicks;
    this.text = '';
    this.turnClicks = 0;
    try {
      this.write(out);
      this.failing = false;
    } catch (err) {
      this.failing = true;
      this.unjournaled += clicks;
      this.failed(err);
    }
    resolve();
  };

  /** A string is written as it is encoded: no Buffer per turn. A short write (rare) writes the rest. */
  private write(out: string): void {
    const bytes = Buffer.byteLength(out);
    let wrote = writeSync(this.current.fd!, out);
    if (wrote < bytes) {
      const rest = Buffer.from(out);
      while (wrote < bytes) wrote += writeSync(this.current.fd!, rest, wrote);
    }
    this.header = '';
    this.current.bytes += bytes;
    if (this.current.bytes >= SEGMENT_BYTES) this.rotate();
  }

  /**
   * A full or failing disk: the clicks are still queued in memory and the redirects are answered (as during a
   * Redis outage); only a process kill before their flush would lose them. The lines are gone, so the positions
   * in this segment would skip them: the next write starts a new segment with its header.
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
