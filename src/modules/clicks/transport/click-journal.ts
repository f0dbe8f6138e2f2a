import { randomBytes } from 'node:crypto';
import { lockDirectory } from '../../../db/directory-lock.js';
import { makePrivateDir } from '../../../lib/private-files.js';
import type { ClickEvent } from '../event/click-event.js';
import { replayLeftOver, type ReplayOptions } from './click-journal-replay.js';
import type { ClickSink } from './click-sink.js';
import { JournalSegments, segmentsIn } from './journal-segments.js';

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
 *   rest; then it forgets every mark but this process's.
 *   Measured (bench/ redirect-nojournal): a unique key per click cost the redirect about 5 µs of CPU (the
 *   key's text, its column and its unique index), against nothing for one mark per transaction.
 * - The replay runs in the background (click-journal-replay.ts): the process listens and answers redirects
 *   at once, its own clicks journaled under its own id and written beside the replay's. Measured: 1,000,000
 *   clicks left behind kept a restarted process from answering for 22–25 s when the replay ran first
 *   (bench/journal-replay.ts: now its first redirect after 1.3 s). Until it has written everything (a failed
 *   one: until the next start), the live queue's writes hold data_fresh_as_of back (`replaying()`: older
 *   clicks are still missing); a shutdown stops it between two writes and leaves the rest to the next start.
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
  /**
   * True until the clicks earlier processes left behind are all written: while the replay runs, and after it
   * failed or was stopped (they wait for the next start). data_fresh_as_of is held back meanwhile.
   */
  replaying(): boolean;
  /** Resolves once that replay has ended (written, stopped or failed; never rejects). */
  replayed(): Promise<void>;
  /** Stops the replay after its current write (shutdown) and resolves once it has stopped. */
  stopReplay(): Promise<void>;
  /** Whether the last write failed (clicks held in memory only), and how many clicks went unjournaled since start. */
  health(): { degraded: boolean; unjournaled: number };
}

export interface OpenClickJournalOptions extends ReplayOptions {
  dir: string;
  /** forgets every mark but `keep`'s (this process's journal), once no segment of an earlier process is left */
  forgetMarks(keep: string): Promise<void>;
}

/** Opens a new segment, and replays what earlier processes left behind in the background. */
export async function openClickJournal(opts: OpenClickJournalOptions): Promise<ClickJournal> {
  const { dir } = opts;
  makePrivateDir(dir);
  // One process per journal directory: a second would replay the first one's live segments (counting their
  // clicks twice) and forget its marks. Held until close(); the OS drops it with a killed process.
  const lock = lockDirectory(
    dir,
    'its click journal belongs to one process, which replays what it finds there at start',
  );
  const leftOver = segmentsIn(dir);
  const id = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  if (leftOver.length === 0) {
    try {
      // No segment of an earlier process: their marks are of no more use (one row per process otherwise).
      await opts.forgetMarks(id);
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  const replay = replayInBackground(opts, leftOver, id);
  const segments = new JournalSegments(dir, id, leftOver, opts.log);
  return {
    id,
    append: (click) => segments.append(click),
    settled: () => segments.settled(),
    written: (n) => segments.written(n),
    close() {
      segments.close();
      lock.release();
    },
    replaying: replay.behind,
    replayed: () => replay.done,
    stopReplay: replay.stop,
    health: () => segments.health(),
  };
}

/** The replay of an earlier process's segments, beside this process's own clicks. */
function replayInBackground(opts: OpenClickJournalOptions, leftOver: readonly string[], id: string) {
  const { log } = opts;
  let stopping = false;
  let behind = leftOver.length > 0;
  const done: Promise<void> = !behind
    ? Promise.resolve()
    : (async () => {
        log.info(
          { segments: leftOver.length },
          'click journal: replaying what an earlier process left behind, in the background',
        );
        try {
          if (await replayLeftOver(opts, leftOver, () => stopping)) {
            await opts.forgetMarks(id);
            behind = false;
          } else log.info('click journal: replay stopped by the shutdown; the next start writes the rest');
        } catch (err) {
          // The segments stay, and the marks say how far they got: the next start writes the rest, once. Until
          // then this process's data_fresh_as_of stays held: the statistics do lack those clicks.
          log.error({ err }, 'click journal replay failed: the next start writes what the database lacks');
        }
      })();
  return {
    done,
    behind: () => behind,
    stop(): Promise<void> {
      stopping = true;
      return done;
    },
  };
}

/**
 * The in-process queue behind the journal: a click is accepted by the queue (bounded), then journaled at the
 * next position; the redirect waits for `settled()` before it answers. The queue is created with the journal's
 * id (memory-click-queue.ts `journal`), so that its writes move the mark.
 */
export function journaledClickQueue(queue: ClickSink, journal: ClickJournal): ClickSink {
  return {
    enqueue(event: ClickEvent) {
      if (!queue.enqueue(event)) return false;
      journal.append(event);
      return true;
    },
    settled: () => journal.settled(),
    // Everything accepted is written: this process's clicks and what earlier ones left behind.
    async flush() {
      await journal.replayed();
      await queue.flush();
    },
    async close() {
      // A shutdown does not wait for a long replay (SHUTDOWN_TIMEOUT_MS): the next start writes the rest.
      await journal.stopReplay();
      await queue.close();
      journal.close();
    },
    status: () => {
      const { degraded, unjournaled } = journal.health();
      return {
        ...queue.status(),
        journalReplaying: journal.replaying(),
        journalDegraded: degraded,
        unjournaledClicks: unjournaled,
      };
    },
  };
}
