import type { Clock } from '../../lib/clock.js';
import type { LinkImports } from '../links/index.js';
import type { ImportOwner } from './import-domains.js';
import type { PlanContext } from './import-plan.js';
import type { ImportedClickWriter, ImportsRepository } from './imports.repository.js';
import type { JobCounts } from './import-batch.js';

/** Why a run stops early: the job was cancelled (DELETE), or the process is going away (SIGTERM, Ctrl-C). */
export type StopReason = 'cancel' | 'shutdown';

export interface RunOptions {
  jobId: number;
  /** the source's identity and the owner's: what "imported before" is keyed by (SPEC §25) */
  sourceKey: string;
  owner: ImportOwner;
  dryRun: boolean;
  onConflict: 'skip' | 'fail';
  plan: PlanContext;
  /** aborted with a StopReason: the run stops at its next transaction boundary */
  signal?: AbortSignal | undefined;
  /** after each transaction: the counts so far */
  onProgress?: ((counts: JobCounts) => void) | undefined;
}

export interface RunDeps {
  repo: ImportsRepository;
  /** the links module's way in for links made elsewhere: its rules and its writes */
  links: Pick<LinkImports, 'create' | 'takenNames' | 'raiseClickCount' | 'addClicks' | 'committed'>;
  writeVisits: ImportedClickWriter;
  clock: Clock;
  /** visits written per transaction (default VISITS_PER_TRANSACTION) */
  visitsPerTransaction?: number;
}

export type RunEnd = { state: 'done' | 'interrupted' | 'cancelled' } | { state: 'failed'; error: string };

/**
 * Visits per transaction: small enough that the one writer of the embedded database is never held long (a
 * chunk is a few milliseconds of writing), large enough that a commit's cost is spread over many visits.
 */
export const VISITS_PER_TRANSACTION = 2_000;

/** Lets other work run between two transactions: the API's requests, the click writer, the redirect. */
export const pause = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
