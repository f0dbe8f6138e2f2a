import type { ClickBatch, WindowProgress } from './click-batch.js';
import type { ClickEvent } from '../event/click-event.js';

/**
 * Where a batch's clicks are in the click journal (click-journal.ts): the positions [first, end) of journal
 * `journal`. A writer given a mark records, in each transaction that commits clicks of the batch, how far
 * the journal's clicks are committed (sqlite-click-thread.ts: a window's progress while it is partly written).
 */
export interface JournalMark {
  journal: string;
  first: number;
  end: number;
  /**
   * The window was partly written before: its clicks of links below `link`, and the first `count` of `link`,
   * are committed and not in the batch (ClickBatch.written).
   */
  after?: WindowProgress;
  /** data_fresh_as_of stays where it is (MemoryClickQueueOptions.holdFresh) */
  holdFresh?: boolean;
}

/** Persists a batch: the PostgreSQL writer, the embedded engine's writer thread, or the replay-safe writer around one. */
export interface ClickWriter {
  write(batch: readonly ClickEvent[]): Promise<void>;
  /** The same from columns, when the writer can take them as they are (the embedded engine's writer thread). */
  writeBatch?(batch: ClickBatch, mark?: JournalMark): Promise<void>;
  /**
   * A window writer (the embedded engine's writer thread) takes up to this many clicks per write, whatever
   * CLICK_BATCH_SIZE, and writes them sorted by link in several transactions; one that fails part way has
   * dropped what it committed from the batch (ClickBatch.dropWritten), which is then written again alone.
   */
  window?: number;
  /**
   * The writer leaves out, in its own transaction, the clicks whose key is recorded already (the PostgreSQL set
   * writer); the replay-safe writer then skips its own lookup of the batch's keys.
   */
  skipsRecordedKeys?: boolean;
}
