import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.js';
import type { ClickEvent } from '../clicks/index.js';
import type { Clock } from '../../lib/clock.js';
import { generateCode, isReservedCode } from '../links/index.js';
import { countResults, notesMessage, type ItemResult, type JobCounts, type PendingItem } from './import-batch.js';
import { isUnreadable, type ImportVisit, type SourceEntry } from './import-item.js';
import { planItem, type PlanContext } from './import-plan.js';
import type { ImportedClickWriter, ImportsRepository, NewImportLink } from './imports.repository.js';

/** Items per transaction, and visits a batch holds in memory before it is written. */
export const BATCH_ITEMS = 500;
export const BATCH_VISITS = 50_000;
const VISIT_CHUNK = 10_000;
const CODE_ATTEMPTS = 8;

export interface RunOptions {
  jobId: number;
  sourceKey: string;
  ownerId: number;
  /** who owns the domains an import creates (the importing admin) */
  domainOwnerId: number;
  dryRun: boolean;
  onConflict: 'skip' | 'fail';
  plan: PlanContext;
  signal?: AbortSignal | undefined;
  /** after each batch: the counts so far */
  onProgress?: ((counts: JobCounts) => void) | undefined;
}

/** A code an import created, on its domain (0: the default domain). */
export interface CreatedCode {
  domainId: number;
  code: string;
}

export interface RunDeps {
  repo: ImportsRepository;
  writeVisits: ImportedClickWriter;
  clock: Clock;
  /** after a batch committed: the codes it created (the in-process link cache may hold "missing" for them) */
  created?: (codes: readonly CreatedCode[]) => void;
}

export type RunEnd = { state: 'done' | 'interrupted' } | { state: 'failed'; error: string };

const clip = (v: string | null, max: number) => (v === null ? null : v.length > max ? v.slice(0, max) : v);

/** A visit as the click writer takes it (clipped as a live visit is). */
const visitEvent = (linkId: number, shortCode: string, v: ImportVisit): ClickEvent => ({
  linkId, shortCode, clickedAt: v.at, ip: clip(v.ip, 45), userAgent: clip(v.userAgent, 512), referrer: clip(v.referrer, 2048), country: v.country,
});

/**
 * Runs an import: reads the source's items in order, a batch at a time, and writes each batch in one
 * transaction — the links, their tags, their visits (click records and rollups), the import's own
 * bookkeeping and the job's counts — so a link never stands without its history, and a run stopped between
 * two batches (SIGINT, a crash) is resumed by running the same import again: what it brought is found in
 * import_links and left unchanged.
 */
export async function runImport(entries: AsyncIterable<SourceEntry>, options: RunOptions, deps: RunDeps): Promise<RunEnd> {
  const totals: JobCounts = { items: 0, created: 0, unchanged: 0, conflicts: 0, failed: 0, visits: 0 };
  let pending: PendingItem[] = [];
  let pendingVisits = 0;
  let seq = 0;
  const flush = async (): Promise<RunEnd | null> => {
    if (pending.length === 0) return null;
    const batch = pending;
    pending = [];
    pendingVisits = 0;
    const outcome = await writeBatch(batch, options, deps);
    for (const [k, v] of Object.entries(outcome.counts)) totals[k as keyof JobCounts] += v;
    options.onProgress?.({ ...totals });
    return outcome.stop;
  };
  try {
    for await (const entry of entries) {
      if (options.signal?.aborted) return { state: 'interrupted' };
      seq += 1;
      const p = await readPending(entry, seq, options.plan);
      pending.push(p);
      pendingVisits += p.visits.length;
      if (p.more !== null || pending.length >= BATCH_ITEMS || pendingVisits >= BATCH_VISITS) {
        const stop = await flush();
        if (stop) return stop;
      }
    }
    if (options.signal?.aborted) return { state: 'interrupted' };
    return (await flush()) ?? { state: 'done' };
  } catch (error) {
    return { state: 'failed', error: (error as Error).message };
  }
}

async function readPending(entry: SourceEntry, seq: number, ctx: PlanContext): Promise<PendingItem> {
  if (isUnreadable(entry)) {
    return { seq, ref: entry.at, sourceDomain: '', sourceCode: '', item: null, plan: { ok: false, reason: entry.reason }, visits: [], more: null };
  }
  const plan = planItem(entry, ctx);
  const sourceDomain = entry.domain ?? '';
  const sourceCode = entry.code !== '' ? entry.code : `url:${entry.target}`.slice(0, 300);
  const visits: ImportVisit[] = [];
  let more: AsyncIterator<ImportVisit> | null = null;
  if (entry.visits !== null) {
    const it = entry.visits[Symbol.asyncIterator]();
    for (;;) {
      if (visits.length >= BATCH_VISITS) {
        more = it;
        break;
      }
      const r = await it.next();
      if (r.done) break;
      visits.push(r.value);
    }
  }
  const ref = `${entry.domain ?? ''}/${entry.code || entry.target}`;
  return { seq, ref, sourceDomain, sourceCode, item: entry, plan, visits, more };
}

/** Every name an item's link claims on its domain: its own code (when it fits short_code) and its aliases. */
const namesOf = (p: PendingItem): string[] => (p.plan.ok ? [...(p.plan.link.shortCode !== null ? [p.plan.link.shortCode] : []), ...p.plan.link.aliases] : []);

/** Ferry's domain id of each planned item (0: the default domain; -1: a domain a dry run would create). */
async function domainsOf(tx: Transaction<Database>, batch: readonly PendingItem[], options: RunOptions, deps: RunDeps): Promise<Map<number, number>> {
  const hosts = [...new Set(batch.flatMap((p) => (p.plan.ok && p.plan.link.domain !== null ? [p.plan.link.domain] : [])))];
  const ids = await deps.repo.domainIds(tx, hosts, options.domainOwnerId, options.dryRun ? null : { at: deps.clock.now() });
  return new Map(batch.flatMap((p) => (p.plan.ok ? [[p.seq, p.plan.link.domain === null ? 0 : ids.get(p.plan.link.domain) ?? -1] as const] : [])));
}

/** What each item of a batch comes to before anything is written: failed, unchanged, a conflict, or to create. */
async function decide(tx: Transaction<Database>, batch: PendingItem[], domainIds: Map<number, number>, options: RunOptions, repo: ImportsRepository) {
  const done = await repo.alreadyImported(tx, options.sourceKey, batch.map((p) => ({ domain: p.sourceDomain, code: p.sourceCode })));
  // Names are keyed "domainId/name": the same code on two domains is two links.
  const taken = await repo.takenCodes(tx, batch.flatMap((p) => namesOf(p).map((code) => ({ domainId: domainIds.get(p.seq)!, code }))));
  const results: ItemResult[] = [];
  const toCreate: PendingItem[] = [];
  const seen = new Set<string>();
  for (const p of batch) {
    const names = namesOf(p);
    const keys = names.map((name) => `${domainIds.get(p.seq)}/${name}`);
    const isDone = done.has(`${p.sourceDomain}/${p.sourceCode}`);
    for (const key of keys) if (seen.has(key)) taken.add(key);
    if (!isDone) for (const key of keys) seen.add(key);
    const takenName = names[keys.findIndex((key) => taken.has(key))];
    const base = { seq: p.seq, ref: p.ref, shortCode: null, visits: 0 };
    if (!p.plan.ok) results.push({ ...base, outcome: 'failed', message: p.plan.reason });
    else if (isDone) results.push({ ...base, outcome: 'unchanged', message: 'imported from this source before' });
    else if (takenName !== undefined) {
      const what = takenName === p.plan.link.shortCode ? 'this code' : `the alias ${takenName}`;
      results.push({ ...base, outcome: 'conflict', shortCode: p.plan.link.shortCode, message: `${what} is taken in Ferry by another link (or was, and stays retired)` });
    } else toCreate.push(p);
  }
  return { results, toCreate };
}

type PlannedOk = Extract<PendingItem['plan'], { ok: true }>;

/** Writes one batch (or for a dry run, only decides it) and records what each item came to. */
async function writeBatch(batch: PendingItem[], options: RunOptions, deps: RunDeps): Promise<{ counts: JobCounts; stop: RunEnd | null }> {
  const { repo, clock } = deps;
  const created: CreatedCode[] = [];
  const result = await repo.transaction(async (tx) => {
    const domainIds = await domainsOf(tx, batch, options, deps);
    const { results, toCreate } = await decide(tx, batch, domainIds, options, repo);
    const conflict = results.find((r) => r.outcome === 'conflict');
    if (conflict && options.onConflict === 'fail') {
      const first = results.filter((r) => r.outcome === 'conflict');
      await repo.recordItems(tx, options.jobId, first, countResults(first), clock.now());
      return { results: first, stop: { state: 'failed' as const, error: `conflict on ${conflict.ref} (--on-conflict fail): nothing of its batch was imported` } };
    }
    if (options.dryRun) {
      for (const p of toCreate) results.push({ seq: p.seq, ref: p.ref, outcome: 'would-create', shortCode: (p.plan.ok && p.plan.link.shortCode) || null, message: notesMessage(p), visits: p.visits.length });
    } else {
      results.push(...(await createLinks(tx, toCreate, domainIds, options, deps, created)));
    }
    results.sort((a, b) => a.seq - b.seq);
    await repo.recordItems(tx, options.jobId, results, countResults(results), clock.now());
    return { results, stop: null };
  });
  deps.created?.(created);
  return { counts: countResults(result.results), stop: result.stop };
}

async function createLinks(
  tx: Transaction<Database>, items: PendingItem[], domainIds: Map<number, number>, options: RunOptions, deps: RunDeps, created: CreatedCode[],
): Promise<ItemResult[]> {
  const now = deps.clock.now();
  const domainOf = items.map((p) => domainIds.get(p.seq)!);
  const codes = await claimAll(tx, items, domainOf, deps.repo);
  const rows: NewImportLink[] = items.map((p, i) => {
    const link = (p.plan as PlannedOk).link;
    const count = p.item?.visitCount ?? 0;
    const row: NewImportLink['row'] = {
      short_code: codes[i]!, domain_id: domainOf[i]!, user_id: options.ownerId, original_url: link.originalUrl, expires_at: link.expiresAt,
      created_at: link.createdAt ?? now, updated_at: now, max_visits: link.maxVisits, forward_query: link.forwardQuery ? 1 : 0,
      password_hash: null, tags: link.tags, title: link.title, aliases: link.aliases.join(','), click_count: p.more === null ? Math.max(0, count - p.visits.length) : 0,
    };
    return { row, sourceDomain: p.sourceDomain, sourceCode: p.sourceCode };
  });
  const ids = await deps.repo.insertLinks(tx, options.sourceKey, rows);
  created.push(...codes.map((code, i) => ({ domainId: domainOf[i]!, code })));
  created.push(...items.flatMap((p, i) => (p.plan.ok ? p.plan.link.aliases.map((code) => ({ domainId: domainOf[i]!, code })) : [])));
  const results: ItemResult[] = [];
  let events: ClickEvent[] = [];
  // Awaited only when a chunk is full: a visit costs a few µs to write, and a promise per visit was a tenth of that.
  const full = () => events.length >= VISIT_CHUNK;
  const write = async () => {
    await deps.writeVisits(tx, events);
    events = [];
  };
  for (const [i, p] of items.entries()) {
    const code = codes[i]!;
    const id = ids.get(`${domainOf[i]}/${code}`)!;
    let n = 0;
    for (const v of p.visits) {
      events.push(visitEvent(id, code, v));
      n += 1;
      if (full()) await write();
    }
    if (p.more !== null) {
      for (let r = await p.more.next(); !r.done; r = await p.more.next()) {
        events.push(visitEvent(id, code, r.value));
        n += 1;
        if (full()) await write();
      }
      if ((p.item?.visitCount ?? 0) > n) await deps.repo.raiseClickCount(tx, id, p.item!.visitCount!);
    }
    results.push({ seq: p.seq, ref: p.ref, outcome: 'created', shortCode: code, message: notesMessage(p), visits: n });
  }
  if (events.length) await write();
  return results;
}

/** Each item's code: its own (checked free on its domain in this transaction), or a generated one claimed with retries. */
async function claimAll(tx: Transaction<Database>, items: PendingItem[], domainOf: readonly number[], repo: ImportsRepository): Promise<string[]> {
  const own = items.map((p) => (p.plan.ok ? p.plan.link.shortCode : null));
  const codes: Array<string | null> = own.map(() => null);
  const claim = async (wanted: ReadonlyArray<string | null>): Promise<void> => {
    for (const domainId of new Set(domainOf)) {
      const got = await repo.claimCodes(tx, domainId, wanted.filter((c, i): c is string => c !== null && domainOf[i] === domainId));
      wanted.forEach((c, i) => { if (c !== null && domainOf[i] === domainId && got.has(c)) codes[i] = c; });
    }
  };
  await claim(own);
  if (own.some((c, i) => c !== null && codes[i] === null)) throw new Error('a code was taken while the import ran; run it again to go on');
  const fresh = (): string | null => { const c = generateCode(); return isReservedCode(c) ? null : c; };
  for (let attempt = 0; codes.some((c) => c === null); attempt += 1) {
    if (attempt >= CODE_ATTEMPTS) throw new Error(`no free short code after ${CODE_ATTEMPTS} attempts`);
    await claim(codes.map((c) => (c === null ? fresh() : null)));
  }
  return codes as string[];
}
