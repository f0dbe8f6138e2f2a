import { addCounts, emptyCounts, type JobCounts, type PendingItem, type PriorImport } from './import-batch.js';
import {
  pause,
  SERVER_PACE,
  type RunDeps,
  type RunEnd,
  type RunOptions,
  type StopReason,
  type VisitThread,
} from './import-context.js';
import type { VisitTarget } from './import-decide.js';
import { writeLinks } from './import-write.js';
import { isUnreadable, type SourceEntry } from './import-item.js';
import { planItem } from './import-plan.js';
import { VisitWriter } from './import-visits.js';

export { type RunDeps, type RunEnd, type RunOptions } from './import-context.js';

/** Visits a batch holds in memory before it is written (its items: the pace's links per transaction). */
export const BATCH_VISITS = 50_000;

/** The run's end when its signal stopped it: a cancelled job, or one cut off by a shutdown. */
const stoppedBy = (signal: AbortSignal): RunEnd => ({
  state: (signal.reason as StopReason) === 'cancel' ? 'cancelled' : 'interrupted',
});

/**
 * Runs an import (SPEC §20, §25): reads the source's items in order, plans each one by the links module's
 * rules, and writes them a batch at a time. No transaction is ever open while the source is asked for
 * anything: a batch is read first, then its links are written in one short transaction (import-write.ts) and
 * its visits a chunk per transaction (import-visits.ts); an item with more visits than a batch holds goes on,
 * a chunk read and then a chunk written. Between transactions other work runs. A run stopped at any point
 * (cancelled, a shutdown, a crash) leaves every link whole, and running the same import again goes on where it
 * stopped: each item's link and how far its visits came are in import_links.
 */
export async function runImport(
  entries: AsyncIterable<SourceEntry>,
  options: RunOptions,
  deps: RunDeps,
): Promise<RunEnd> {
  const totals = emptyCounts();
  const progressed = (counts: Partial<JobCounts>) => {
    addCounts(totals, counts);
    options.onProgress?.({ ...totals });
  };
  // A visit thread writes visits while the run reads on, started with the first chunk (a CSV file has none); a
  // dry run writes none.
  let opened: VisitThread | null = null;
  const open = deps.visitThread && !options.dryRun ? deps.visitThread : null;
  const thread: VisitThread | null = open && {
    write: (events, bookkeeping) => (opened ??= open()).write(events, bookkeeping),
    close: async () => opened?.close(),
  };
  try {
    return await run(entries, options, deps, {
      visits: new VisitWriter(options, deps, progressed, thread),
      progressed,
    });
  } finally {
    await thread?.close();
  }
}

async function run(
  entries: AsyncIterable<SourceEntry>,
  options: RunOptions,
  deps: RunDeps,
  { visits, progressed }: { visits: VisitWriter; progressed: (counts: Partial<JobCounts>) => void },
): Promise<RunEnd> {
  const batchItems = (deps.pace ?? SERVER_PACE).linksPerTransaction;
  let pending: PendingItem[] = [];
  let pendingVisits = 0;
  let seq = 0;
  const aborted = () => options.signal?.aborted === true;
  /** A stop lands between transactions: the visits read so far are written, and the run ends. */
  const stopped = async (): Promise<RunEnd> => {
    await visits.finish();
    return stoppedBy(options.signal!);
  };
  const flush = async (): Promise<RunEnd | null> => {
    const batch = pending;
    pending = [];
    pendingVisits = 0;
    return batch.length ? writeBatch(batch, options, deps, visits, progressed) : null;
  };
  try {
    const priors = await knownPriors(options, deps);
    for await (const entry of entries) {
      if (aborted()) return await stopped();
      seq += 1;
      const p = await readPending(entry, seq, { options, deps, priors }, BATCH_VISITS - pendingVisits);
      pending.push(p);
      pendingVisits += p.visits.length;
      if (p.more !== null || pending.length >= batchItems || pendingVisits >= BATCH_VISITS) {
        const stop = await flush();
        if (stop) return stop;
        if (aborted()) return await stopped();
      }
    }
    if (aborted()) return await stopped();
    const end = (await flush()) ?? { state: 'done' };
    await visits.finish();
    return end;
  } catch (error) {
    // A stop aborts the source's request in flight: what was read before it is still written.
    if (aborted()) return await stopped().catch(() => stoppedBy(options.signal!));
    // What was handed to a visit thread is committed (or failed) before the job's end is recorded.
    await visits.settled().catch(() => undefined);
    return { state: 'failed', error: (error as Error).message };
  }
}

/** Items a run reads all at once of what the same source and owner brought before (about 150 bytes each). */
const PRIORS_AT_ONCE = 200_000;

/**
 * What the same source and owner brought before, read at once when there is little of it (none, on a first
 * run): then no item needs a lookup of its own. Else null, and items are looked up as they come.
 */
async function knownPriors(options: RunOptions, deps: RunDeps): Promise<Map<string, PriorImport> | null> {
  const count = await deps.repo.priorCount(options.sourceKey);
  if (count === 0) return new Map();
  return count <= PRIORS_AT_ONCE ? deps.repo.allPriors(options.sourceKey) : null;
}

interface ReadContext {
  options: RunOptions;
  deps: RunDeps;
  priors: Map<string, PriorImport> | null;
}

/**
 * One source item with its plan, and for an item with visit records: what an earlier run brought of it (so that
 * the source is asked only for the visits after those) and up to `room` of its visits.
 */
async function readPending(entry: SourceEntry, seq: number, ctx: ReadContext, room: number): Promise<PendingItem> {
  const { options, deps, priors } = ctx;
  if (isUnreadable(entry)) {
    const failure = { code: 'VALIDATION_ERROR' as const, field: 'source', message: entry.reason };
    return {
      seq,
      ref: entry.at,
      sourceDomain: '',
      sourceCode: '',
      item: null,
      plan: { ok: false, failure },
      prior: null,
      visits: [],
      more: null,
    };
  }
  const sourceDomain = entry.domain ?? '';
  const sourceCode = entry.code !== '' ? entry.code : `url:${entry.target}`.slice(0, 300);
  const ref =
    `${entry.domain ?? ''}/${entry.code || entry.target}`.slice(0, 580) + (entry.row ? ` (${entry.row})` : '');
  const key = `${sourceDomain}/${sourceCode}`;
  // An item the same source and owner brought before is a link already: planning it again (the API's rules,
  // its URL parsed and checked) would be most of what a re-run of a large source costs.
  const known = priors?.get(key);
  const plan = known ? null : planItem(entry, options.plan);
  const prior = known ?? (priors && plan?.ok ? null : undefined);
  const p: PendingItem = { seq, ref, sourceDomain, sourceCode, item: entry, plan, prior, visits: [], more: null };
  // An item that cannot become a link has no visits read: a reader that shares one cursor (YOURLS) skips them.
  if (entry.visits === null || (plan !== null && !plan.ok)) return p;
  if (p.prior === undefined)
    p.prior =
      (await deps.repo.priorImports(options.sourceKey, [{ domain: sourceDomain, code: sourceCode }])).get(key) ?? null;
  const it = entry.visits(p.prior?.cursor ?? null)[Symbol.asyncIterator]();
  for (;;) {
    if (p.visits.length >= Math.max(room, 1)) {
      p.more = it;
      break;
    }
    const r = await it.next();
    if (r.done) break;
    p.visits.push(r.value);
  }
  return p;
}

/** A batch: its links in one transaction, then its visits a chunk per transaction, then the rest of a long history. */
async function writeBatch(
  batch: PendingItem[],
  options: RunOptions,
  deps: RunDeps,
  visits: VisitWriter,
  progressed: (c: Partial<JobCounts>) => void,
): Promise<RunEnd | null> {
  // The links' transaction after the visits handed to a thread: commits in the same order as without it.
  await visits.settled();
  const decided = await writeLinks(batch, options, deps);
  deps.links.committed(decided.created);
  progressed({});
  if (decided.stop) {
    await visits.finish(); // the earlier batches' visits, held for a whole chunk
    return decided.stop;
  }
  if (decided.carried) await visits.carry(decided.carried);
  else await pause();
  const written = new Map<number, number>();
  for (const p of batch) {
    const target = decided.targets.get(p.seq);
    if (!target) continue;
    let n = 0;
    for (const v of p.visits) {
      await visits.add(p, target, v);
      n += 1;
    }
    // The rest of a long history: read a chunk (no transaction open), write it, and so on; a stop lands between chunks.
    for (
      let r = p.more && !options.signal?.aborted ? await p.more.next() : null;
      r && !r.done;
      r = options.signal?.aborted ? null : await p.more!.next()
    ) {
      await visits.add(p, target, r.value);
      n += 1;
    }
    written.set(p.seq, n);
  }
  await visits.batchWritten();
  // Visits wait in the writer for a whole chunk, across batches (a re-run's few new visits are spread over many
  // items); they are written first when a source's own count must be raised above them.
  if (options.signal?.aborted) {
    await visits.finish();
    return stoppedBy(options.signal);
  }
  const short = shortOfCount(batch, decided.targets, written, options);
  if (short.length) {
    await visits.finish();
    await raiseCounts(short, decided.targets, deps);
  }
  return null;
}

/** The items whose source counts more visits (YOURLS's `clicks`) than the records it gave. */
function shortOfCount(
  batch: readonly PendingItem[],
  targets: ReadonlyMap<number, VisitTarget>,
  written: ReadonlyMap<number, number>,
  options: RunOptions,
): PendingItem[] {
  if (options.dryRun) return [];
  return batch.filter(
    (p) =>
      p.item?.visits != null &&
      targets.has(p.seq) &&
      (p.item.visitCount ?? 0) > (p.prior?.visits ?? 0) + (written.get(p.seq) ?? 0),
  );
}

/** A source's own count beyond the visit records it gave becomes the link's click count. */
async function raiseCounts(short: readonly PendingItem[], targets: ReadonlyMap<number, VisitTarget>, deps: RunDeps) {
  await deps.repo.transaction(async (tx) => {
    for (const p of short) await deps.links.raiseClickCount(tx, targets.get(p.seq)!.linkId, p.item!.visitCount!);
  });
}
