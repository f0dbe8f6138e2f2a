import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.js';
import type { CheckedLink } from '../links/index.js';
import type { ItemResult, PendingItem, PriorImport } from './import-batch.js';
import type { RunDeps, RunOptions } from './import-context.js';
import type { ImportDomain } from './import-domains.js';

type Tx = Transaction<Database>;

/**
 * What each item of a batch comes to before anything is written (failed, unchanged, a conflict, or to create), read
 * in the batch's transaction; import-write.ts writes what is decided here.
 */

/** Where an item's visits go: the link it became (now or in an earlier run), and what the item came to. */
export interface VisitTarget {
  linkId: number;
  shortCode: string;
  outcome: 'created' | 'unchanged';
}

/** Every name an item's link claims on its domain: its own code (when it fits short_code) and its aliases. */
const namesOf = (link: CheckedLink): string[] => [
  ...(link.shortCode !== null ? [link.shortCode] : []),
  ...link.aliases,
];

/** An item imported before: its link, and what the item came to. */
export const unchangedTarget = (prior: PriorImport): VisitTarget => ({
  linkId: prior.linkId,
  shortCode: prior.shortCode,
  outcome: 'unchanged',
});
export const unchangedResult = (p: PendingItem, prior: PriorImport): ItemResult => ({
  seq: p.seq,
  ref: p.ref,
  outcome: 'unchanged',
  shortCode: prior.shortCode,
  message: null,
  errorCode: null,
});

const failed = (p: PendingItem, errorCode: string, message: string): ItemResult => ({
  seq: p.seq,
  ref: p.ref,
  outcome: 'failed',
  shortCode: null,
  message: `${errorCode}: ${message}`.slice(0, 1000),
  errorCode,
});

/** Each planned item's domain (0: the default domain; -1: one a dry run would create), or why the owner may not use it. */
async function domainsOf(
  tx: Tx,
  batch: readonly PendingItem[],
  options: RunOptions,
  deps: RunDeps,
): Promise<Map<number, ImportDomain>> {
  const hosts = [
    ...new Set(batch.flatMap((p) => (p.plan?.ok && p.plan.link.domain !== null ? [p.plan.link.domain] : []))),
  ];
  const found = await deps.repo.domainsFor(tx, hosts, options.owner, options.dryRun ? null : { at: deps.clock.now() });
  return new Map(
    batch.flatMap((p) =>
      p.plan?.ok
        ? [[p.seq, p.plan.link.domain === null ? { id: 0 } : (found.get(p.plan.link.domain) ?? { id: -1 })] as const]
        : [],
    ),
  );
}

/** The earlier imports of the items not looked up yet (those without visit records). */
async function priorsOf(
  tx: Tx,
  batch: readonly PendingItem[],
  options: RunOptions,
  deps: RunDeps,
): Promise<Map<number, PriorImport | null>> {
  // Only items that can become a link: a failed one's code may hold anything (a NUL, which PostgreSQL refuses).
  const unknown = batch.filter((p) => p.prior === undefined && p.plan?.ok);
  const found = await deps.repo.priorImports(
    options.sourceKey,
    unknown.map((p) => ({ domain: p.sourceDomain, code: p.sourceCode })),
    tx,
  );
  return new Map(
    batch.map((p) => [
      p.seq,
      p.prior !== undefined ? p.prior : (found.get(`${p.sourceDomain}/${p.sourceCode}`) ?? null),
    ]),
  );
}

/** What each item comes to before anything is written: failed, unchanged, a conflict, or to create. */
export async function decide(tx: Tx, batch: readonly PendingItem[], options: RunOptions, deps: RunDeps) {
  const domains = await domainsOf(tx, batch, options, deps);
  const priors = await priorsOf(tx, batch, options, deps);
  const domainId = (p: PendingItem) => {
    const d = domains.get(p.seq);
    return d && 'id' in d ? d.id : -1;
  };
  const fresh = batch.filter((p) => p.plan?.ok && priors.get(p.seq) === null);
  // Names are keyed "domainId/name": the same code on two domains is two links.
  const taken = await deps.links.takenNames(
    tx,
    fresh.flatMap((p) => (p.plan?.ok ? namesOf(p.plan.link).map((code) => ({ domainId: domainId(p), code })) : [])),
  );
  const results: ItemResult[] = [];
  const toCreate: PendingItem[] = [];
  const unchanged: Array<{ p: PendingItem; prior: PriorImport }> = [];
  const keep = (p: PendingItem, prior: PriorImport) => {
    results.push(unchangedResult(p, prior));
    unchanged.push({ p, prior });
  };
  for (const p of batch) {
    const prior = priors.get(p.seq) ?? null;
    const domain = domains.get(p.seq);
    if (p.plan === null)
      keep(p, prior!); // imported before, found before planning: not planned again
    else if (!p.plan.ok)
      results.push(failed(p, p.plan.failure.code, `${p.plan.failure.field}: ${p.plan.failure.message}`));
    else if (domain && 'notOwned' in domain)
      results.push(failed(p, 'DOMAIN_NOT_OWNED', `domain: ${p.plan.link.domain} belongs to another user`));
    else if (prior !== null) keep(p, prior);
    else {
      const keys = namesOf(p.plan.link).map((name) => `${domainId(p)}/${name}`);
      const takenName = keys.findIndex((key) => taken.has(key));
      for (const key of keys) taken.add(key); // a later item of the batch with the same name conflicts with this one
      if (takenName === -1) toCreate.push(p);
      else {
        const what =
          takenName === 0 && p.plan.link.shortCode !== null
            ? 'this code'
            : `the alias ${namesOf(p.plan.link)[takenName]}`;
        results.push({
          seq: p.seq,
          ref: p.ref,
          outcome: 'conflict',
          shortCode: p.plan.link.shortCode,
          errorCode: 'CONFLICT',
          message: `${what} is taken in Ferry by another link (or was, and stays retired)`,
        });
      }
    }
  }
  return { results, toCreate, unchanged, domainId };
}
