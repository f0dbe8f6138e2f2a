import type { ImportOutcome } from '../../db/types.js';
import type { ImportVisit, ImportItem } from './import-item.js';
import type { ItemPlan } from './import-plan.js';

/** What this source brought of an item before (import_links): its link, and how far its visits came. */
export interface PriorImport {
  linkId: number;
  shortCode: string;
  /** visit records brought (or, for a source that only counts visits, the count last brought) */
  visits: number;
  cursor: string | null;
}

/** One source item read, with its plan and the visits read so far (all of them, unless `more` is set). */
export interface PendingItem {
  seq: number;
  /** "domain/code" (or the line of a CSV row that could not be read) */
  ref: string;
  /** the key of the item in import_links: the source's domain ('' for its default) and code (or url: for codeless) */
  sourceDomain: string;
  sourceCode: string;
  item: ImportItem | null;
  /** null: imported before by the same source and owner (`prior` says what it became): not planned again */
  plan: ItemPlan | null;
  /** what an earlier run brought of it; undefined: not looked up yet (items without visit records) */
  prior: PriorImport | null | undefined;
  visits: ImportVisit[];
  /** the rest of the visits when more than a batch holds (read and written a chunk at a time, after the batch) */
  more: AsyncIterator<ImportVisit> | null;
}

/** What one item came to, for the job's counts and its list of items. */
export interface ItemResult {
  seq: number;
  ref: string;
  outcome: ImportOutcome;
  shortCode: string | null;
  message: string | null;
  /** the API's error code of a failed item (SPEC §25) */
  errorCode: string | null;
}

/** The counts of a job, as a batch adds to them. */
export interface JobCounts {
  items: number;
  created: number;
  unchanged: number;
  conflicts: number;
  failed: number;
  visits: number;
  visitsSkipped: number;
}

export const emptyCounts = (): JobCounts => ({
  items: 0,
  created: 0,
  unchanged: 0,
  conflicts: 0,
  failed: 0,
  visits: 0,
  visitsSkipped: 0,
});

export function addCounts(to: JobCounts, more: Partial<JobCounts>): void {
  for (const [k, v] of Object.entries(more) as Array<[keyof JobCounts, number]>) to[k] += v;
}

export function countResults(results: readonly ItemResult[]): JobCounts {
  const c = emptyCounts();
  for (const r of results) {
    c.items += 1;
    if (r.outcome === 'created' || r.outcome === 'would-create') c.created += 1;
    else if (r.outcome === 'unchanged') c.unchanged += 1;
    else if (r.outcome === 'conflict') c.conflicts += 1;
    else c.failed += 1;
  }
  return c;
}

/** The notes of an item (what it could not bring as it was) as one message. */
export const notesMessage = (p: PendingItem): string | null =>
  p.plan?.ok && p.plan.link.notes.length > 0
    ? p.plan.link.notes
        .map((n) => `${n.field}: ${n.reason}`)
        .join('; ')
        .slice(0, 1000)
    : null;
