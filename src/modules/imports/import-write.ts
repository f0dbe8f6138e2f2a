import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.js';
import type { DomainCode } from '../links/index.js';
import {
  countResults,
  notesMessage,
  type ItemResult,
  type JobCounts,
  type PendingItem,
  type PriorImport,
} from './import-batch.js';
import type { RunDeps, RunEnd, RunOptions } from './import-context.js';
import { decide, unchangedResult, unchangedTarget, type VisitTarget } from './import-decide.js';
import type { ItemPlan } from './import-plan.js';

type Tx = Transaction<Database>;

export interface DecidedBatch {
  /** each item's link, by seq: the items whose visits are written */
  targets: Map<number, VisitTarget>;
  /** the names the batch created (for this instance's cache, once committed) */
  created: DomainCode[];
  stop: RunEnd | null;
  /** the counts of a batch that needed no transaction (every item imported before), for the next one to write */
  carried?: JobCounts;
}

/** The batch's new links, through the links module: each one's target and result noted, their names returned. */
async function createLinks(
  tx: Tx,
  toCreate: readonly PendingItem[],
  domainId: (p: PendingItem) => number,
  into: { targets: Map<number, VisitTarget>; results: ItemResult[] },
  options: RunOptions,
  deps: RunDeps,
): Promise<DomainCode[]> {
  const { repo, links } = deps;
  const { targets, results } = into;
  const created: DomainCode[] = [];
  const made = await links.create(
    tx,
    toCreate.map((p) => {
      const link = (p.plan as Extract<ItemPlan, { ok: true }>).link;
      return {
        link,
        domainId: domainId(p),
        userId: options.owner.id,
        clickCount: p.item?.visits === null ? (p.item.visitCount ?? 0) : 0,
      };
    }),
  );
  toCreate.forEach((p, i) => {
    const link = (p.plan as Extract<ItemPlan, { ok: true }>).link;
    targets.set(p.seq, { linkId: made[i]!.id, shortCode: made[i]!.code, outcome: 'created' });
    created.push(...[made[i]!.code, ...link.aliases].map((code) => ({ domainId: domainId(p), code })));
    results.push({
      seq: p.seq,
      ref: p.ref,
      outcome: 'created',
      shortCode: made[i]!.code,
      message: notesMessage(p),
      errorCode: null,
    });
  });
  await repo.recordImportedLinks(
    tx,
    options.sourceKey,
    toCreate.map((p) => ({
      domain: p.sourceDomain,
      code: p.sourceCode,
      linkId: targets.get(p.seq)!.linkId,
      visits: p.item?.visits === null ? (p.item.visitCount ?? 0) : 0,
    })),
  );
  return created;
}

/**
 * Decides a batch and writes its links, in one short transaction: the links (through the links module), which
 * source item each became, the items' outcomes and the job's counts. Visits come after, a chunk per
 * transaction (import-visits.ts). A source that only counts visits (Kutt) adds what its count grew since the
 * last run to the link's click count here.
 */
export async function writeLinks(batch: PendingItem[], options: RunOptions, deps: RunDeps): Promise<DecidedBatch> {
  if (batch.every(importedBefore)) return knownBatch(batch);
  const { repo, clock } = deps;
  return repo.transaction(async (tx) => {
    const { results, toCreate, unchanged, domainId } = await decide(tx, batch, options, deps);
    const targets = new Map<number, VisitTarget>(unchanged.map(({ p, prior }) => [p.seq, unchangedTarget(prior)]));
    const conflicts = results.filter((r) => r.outcome === 'conflict');
    if (conflicts.length && options.onConflict === 'fail') {
      await repo.recordItems(tx, options.jobId, conflicts);
      await repo.addCounts(tx, options.jobId, countResults(conflicts), clock.now());
      return {
        targets: new Map(),
        created: [],
        stop: {
          state: 'failed',
          error: `conflict on ${conflicts[0]!.ref} (--on-conflict fail): nothing of its batch was imported`,
        },
      };
    }
    const created: DomainCode[] = [];
    if (options.dryRun) {
      for (const p of toCreate)
        results.push({
          seq: p.seq,
          ref: p.ref,
          outcome: 'would-create',
          shortCode: (p.plan?.ok && p.plan.link.shortCode) || null,
          message: notesMessage(p),
          errorCode: null,
        });
    } else {
      created.push(...(await createLinks(tx, toCreate, domainId, { targets, results }, options, deps)));
    }
    results.sort((a, b) => a.seq - b.seq);
    // An item imported before is counted, and listed only once it gets new visits (a re-run of a large source
    // would otherwise write a row for each of its items).
    await repo.recordItems(
      tx,
      options.jobId,
      results.filter((r) => r.outcome !== 'unchanged'),
    );
    await repo.addCounts(tx, options.jobId, countResults(results), clock.now());
    if (!options.dryRun) await addCountedVisits(tx, unchanged, options, deps);
    return { targets, created, stop: null };
  });
}

/** An item imported before that has visit records (a source that only counts them, Kutt, adds to its link). */
const importedBefore = (p: PendingItem) => p.plan === null && p.item?.visits !== null;

/**
 * A batch of items imported before: their links exist and nothing of theirs is written, so no transaction is
 * opened (a re-run of a large source would otherwise commit one per batch); its counts go with the next write.
 */
function knownBatch(batch: readonly PendingItem[]): DecidedBatch {
  const targets = new Map<number, VisitTarget>(batch.map((p) => [p.seq, unchangedTarget(p.prior!)]));
  const carried = countResults(batch.map((p) => unchangedResult(p, p.prior!)));
  return { targets, created: [], stop: null, carried };
}

/** A re-run of a source that only counts visits: the count's growth since the last run goes to the link. */
async function addCountedVisits(
  tx: Tx,
  unchanged: ReadonlyArray<{ p: PendingItem; prior: PriorImport }>,
  options: RunOptions,
  deps: RunDeps,
): Promise<void> {
  for (const { p, prior } of unchanged) {
    const count = p.item?.visits === null ? p.item.visitCount : null;
    if (count === null || count === undefined || count <= prior.visits) continue;
    await deps.links.addClicks(tx, prior.linkId, count - prior.visits);
    const item = { ref: p.ref, outcome: 'unchanged' as const, shortCode: prior.shortCode };
    await deps.repo.advanceVisits(tx, options.sourceKey, options.jobId, [
      {
        sourceDomain: p.sourceDomain,
        sourceCode: p.sourceCode,
        linkId: prior.linkId,
        seq: p.seq,
        added: count - prior.visits,
        cursor: null,
        item,
      },
    ]);
  }
}
