import type { ClickEvent } from '../clicks/index.js';
import { EARLIEST_INSTANT, LATEST_INSTANT } from '../../lib/instant.js';
import { addCounts, emptyCounts, type JobCounts, type PendingItem } from './import-batch.js';
import type { VisitTarget } from './import-decide.js';
import { pause, SERVER_PACE, type RunDeps, type RunOptions, type VisitThread } from './import-context.js';
import type { ImportVisit } from './import-item.js';
import type { VisitProgress } from './imported-links.js';

/** Items whose counts a writer carries before it writes them without a chunk of visits. */
const CARRIED_ITEMS = 5_000;
/**
 * Chunks handed to a visit thread that may wait there to be written: the run reads this far ahead of the writes
 * (an item with a long history), and no further, so that memory stays bounded.
 */
const HANDED_CHUNKS = 4;

/** A visit's text as a live visit's would be (an HTTP header holds no control character), clipped the same way. */
const clip = (v: string | null, max: number) =>
  v === null ? null : (v.length > max ? v.slice(0, max) : v).replace(/\p{Cc}/gu, ' ');
const datable = (at: number) => Number.isFinite(at) && at >= EARLIEST_INSTANT && at <= LATEST_INSTANT;

/** A visit as the click writer takes it (clipped as a live visit is). */
const visitEvent = (target: VisitTarget, v: ImportVisit): ClickEvent => ({
  linkId: target.linkId,
  shortCode: target.shortCode,
  clickedAt: v.at,
  ip: clip(v.ip, 45),
  userAgent: clip(v.userAgent, 512),
  referrer: clip(v.referrer, 2048),
  country: v.country,
});

/**
 * Writes imported visits a chunk per transaction (SPEC §25: no transaction waits on the source, none holds the
 * embedded database's one writer for long): the click records and rollups, how far each item's visits came
 * (import_links: a cut-off run or a re-run goes on from there) and the job's counts, together. A visit dated
 * outside 1970–9999 is skipped and counted (`visits_skipped`); its mark still moves on. A dry run only counts.
 *
 * Given a visit thread (the CLI on the embedded engine: RunDeps.visitThread), each chunk's transaction is
 * handed to it and the run reads on while it is written; the chunks commit in the same order, each with the same
 * rows. `settled` waits for them: the run calls it before any transaction of its own (a batch's links, a raised
 * count, the job's end), so that its commits come in the same order as without the thread.
 */
export class VisitWriter {
  private events: ClickEvent[] = [];
  private progress = new Map<number, VisitProgress>();
  private skipped = 0;
  /** the counts of batches that wrote nothing of their own (items imported before), for the next transaction */
  private carried = emptyCounts();
  private readonly size: number;
  /** the chunks handed to the visit thread, oldest first, until known committed */
  private handed: Promise<void>[] = [];

  constructor(
    private readonly options: RunOptions,
    private readonly deps: RunDeps,
    private readonly onWritten: (counts: Partial<JobCounts>) => void,
    private readonly thread: VisitThread | null = null,
  ) {
    this.size = (deps.pace ?? SERVER_PACE).visitsPerTransaction;
  }

  /** Adds a visit of item `p`, going to `target`; a full chunk is written before this returns. */
  async add(p: PendingItem, target: VisitTarget, v: ImportVisit): Promise<void> {
    const item = { ref: p.ref, outcome: target.outcome, shortCode: target.shortCode };
    const progress = this.progress.get(p.seq) ?? {
      sourceDomain: p.sourceDomain,
      sourceCode: p.sourceCode,
      linkId: target.linkId,
      seq: p.seq,
      added: 0,
      cursor: null,
      item,
    };
    this.progress.set(p.seq, progress);
    if (v.key !== '') progress.cursor = v.key;
    if (!datable(v.at)) this.skipped += 1;
    else {
      this.events.push(visitEvent(target, v));
      progress.added += 1;
    }
    if (this.events.length + this.skipped >= this.size) await this.flush();
  }

  /**
   * The counts of a batch that needed no transaction of its own (every item imported before): written with the
   * next chunk, or once they stand for CARRIED_ITEMS items, so that a re-run's progress still moves.
   */
  async carry(counts: Partial<JobCounts>): Promise<void> {
    addCounts(this.carried, counts);
    if (this.carried.items >= CARRIED_ITEMS) await this.flush();
  }

  /** Writes what is held, in one transaction, then lets other work run. */
  async flush(): Promise<void> {
    if (this.progress.size === 0 && this.carried.items === 0) return;
    const [events, progress, skipped, carried] = [this.events, [...this.progress.values()], this.skipped, this.carried];
    this.events = [];
    this.progress = new Map();
    this.skipped = 0;
    this.carried = emptyCounts();
    const counts = { visits: events.length, visitsSkipped: skipped };
    const { repo, writeVisits, clock } = this.deps;
    if (this.thread !== null && !this.options.dryRun) {
      const { sourceKey, jobId } = this.options;
      const at = clock.now();
      const { committed } = await this.thread.write(events, async (tx) => {
        if (progress.length) await repo.advanceVisits(tx, sourceKey, jobId, progress);
        addCounts(carried, counts);
        await repo.addCounts(tx, jobId, carried, at);
      });
      const written = committed.then(() => {
        if (events.length) this.deps.visitsWritten?.();
        this.onWritten(counts);
      });
      written.catch(() => undefined); // thrown where it is awaited: settled(), or here below
      this.handed.push(written);
      if (this.handed.length > HANDED_CHUNKS) await this.handed.shift();
      return;
    }
    await repo.transaction(async (tx) => {
      if (!this.options.dryRun) {
        if (events.length) await writeVisits(tx, events);
        if (progress.length) await repo.advanceVisits(tx, this.options.sourceKey, this.options.jobId, progress);
      }
      addCounts(carried, counts);
      await repo.addCounts(tx, this.options.jobId, carried, clock.now());
    });
    if (events.length && !this.options.dryRun) this.deps.visitsWritten?.();
    this.onWritten(counts);
    await pause();
  }

  /**
   * After a batch's links: with a visit thread, its visits are handed over now (unless a re-run's few), to be
   * written while the next batch is read.
   */
  async batchWritten(): Promise<void> {
    if (this.thread !== null && this.events.length >= this.size / 4) await this.flush();
  }

  /** Once every chunk handed to the visit thread has committed (a chunk's failure is thrown here). */
  async settled(): Promise<void> {
    while (this.handed.length) await this.handed.shift();
  }

  /** Writes what is held and waits until it is committed. */
  async finish(): Promise<void> {
    await this.flush();
    await this.settled();
  }
}
