import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import type { ImportedVisitsThread } from '../clicks/index.js';
import type { Clock } from '../../lib/clock.js';
import type { LinkImports } from '../links/index.js';
import type { ImportOwner } from './import-domains.js';
import type { PlanContext } from './import-plan.js';
import type { ImportedClickWriter, ImportsRepository } from './imports.repository.js';
import type { JobCounts } from './import-batch.js';
import type { SourceLimits, SourceSpec } from './sources/index.js';

/** What an import is asked to do (the CLI's options, the endpoint's body). */
export interface ImportRequest extends SourceSpec {
  owner?: string | undefined;
  dryRun?: boolean | undefined;
  onConflict?: 'skip' | 'fail' | undefined;
  /** FROM → TO host names; `default` stands for a default domain on either side */
  domainMap?: Record<string, string> | undefined;
}

/** What the imports service is built with; its job execution (import-execution.ts) runs with the same. */
export interface ImportsServiceDeps {
  db: Kysely<Database>;
  repo: ImportsRepository;
  /** the links module's way in: its rules and its writes (SPEC §25) */
  links: LinkImports;
  writeVisits: ImportedClickWriter;
  clock: Clock;
  publicBaseUrl: string;
  /** what one answer of a source may cost (IMPORT_MAX_RESPONSE_BYTES, 30 s) */
  limits: Omit<SourceLimits, 'signal'>;
  /** the running job's pulse and how often it looks for a cancellation (default HEARTBEAT_MS) */
  heartbeatMs?: number;
  /** how much one transaction writes (default SERVER_PACE: short, for a process that also serves) */
  pace?: ImportPace;
  /** after visits were written: the statistics this process remembers for past days are stale */
  visitsWritten?: () => void;
  /** a run's visit chunks written by a thread of their own (the CLI on the embedded engine): VisitThread */
  visitThread?: () => VisitThread;
}

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
  /** how much one transaction writes (default SERVER_PACE) */
  pace?: ImportPace;
  /** after a transaction wrote visits (on their own, past, dates): statistics remembered in memory are stale */
  visitsWritten?: () => void;
  /** opens a run's visit thread: its visit chunks are then written there while the run reads on */
  visitThread?: () => VisitThread;
}

/**
 * Where a process that serves nothing beside its import (the CLI, on the embedded engine) writes a run's visit
 * chunks, committed by another thread while the run reads its source on (the clicks module's
 * ImportedVisitsThread: chunks commit in the order written; after one failed, none later is written).
 */
export type VisitThread = ImportedVisitsThread;

export type RunEnd = { state: 'done' | 'interrupted' | 'cancelled' } | { state: 'failed'; error: string };

/** How much one transaction of an import writes: links (a batch of items) and visits. */
export interface ImportPace {
  linksPerTransaction: number;
  visitsPerTransaction: number;
}

/**
 * In a server, where the same process answers visits and API requests (SPEC §25: an import never holds the
 * instance): transactions of a few milliseconds each (bench/import-load.ts measured 2,000 visits to one at
 * 3.9× the idle redirect p99, 500 at 1.4×), with other work let in between.
 */
export const SERVER_PACE: ImportPace = { linksPerTransaction: 100, visitsPerTransaction: 500 };

/**
 * The command line's own process serves nothing: larger transactions spread each commit over more rows. A
 * server beside it on the embedded database waits at most one such transaction to write (tens of ms).
 */
export const CLI_PACE: ImportPace = { linksPerTransaction: 500, visitsPerTransaction: 10_000 };

/** Lets other work run between two transactions: the API's requests, the click writer, the redirect. */
export const pause = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
