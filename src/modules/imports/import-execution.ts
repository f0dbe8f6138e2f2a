import type { ImportJobRow } from '../../db/types.js';
import type { JobCounts } from './import-batch.js';
import type { ImportRequest, ImportsServiceDeps, StopReason } from './import-context.js';
import type { ImportOwner } from './import-domains.js';
import { runImport, type RunEnd } from './import-runner.js';
import { readSource, SOURCE_DEFAULT_DOMAINS } from './sources/index.js';

/** How often a running job shows it is alive, and after how long without a pulse it counts as interrupted. */
export const HEARTBEAT_MS = 5_000;
export const STALE_AFTER_MS = 60_000;
/** How long DELETE waits for a job running on another instance to stop. */
const CANCEL_WAIT_MS = 15_000;

export const RESUME = 'start the same import again: what was imported is kept, and it goes on where it stopped';
const stopMessage = (end: RunEnd): string | null => {
  if (end.state === 'failed') return end.error;
  if (end.state === 'interrupted') return `interrupted (the process running it stopped): ${RESUME}`;
  return end.state === 'cancelled' ? 'cancelled (DELETE): what was imported before it stopped is kept' : null;
};

export interface RunOpts {
  /** an outer stop (the CLI's Ctrl-C): the job ends `interrupted` */
  signal?: AbortSignal | undefined;
  onProgress?: ((c: JobCounts) => void) | undefined;
}

/** One job's run, with its pulse; its end recorded on the job. */
async function runJob(
  deps: ImportsServiceDeps,
  job: ImportJobRow,
  request: ImportRequest,
  owner: ImportOwner,
  stop: AbortController,
  opts: RunOpts,
): Promise<RunEnd> {
  const { repo, clock } = deps;
  const pulse = setInterval(() => {
    repo.heartbeat(job.id, clock.now()).then(
      ({ cancelRequested }) => {
        if (cancelRequested) stop.abort('cancel' satisfies StopReason);
      },
      () => undefined,
    );
  }, deps.heartbeatMs ?? HEARTBEAT_MS);
  try {
    const marks = { after: await repo.visitsMark(job.source_key), through: null as string | null };
    const end = await runImport(
      readSource(request, { ...deps.limits, signal: stop.signal }, marks),
      {
        jobId: job.id,
        sourceKey: job.source_key,
        owner,
        dryRun: job.dry_run === 1,
        onConflict: job.on_conflict,
        plan: {
          publicBaseUrl: deps.publicBaseUrl,
          sourceDefaults: SOURCE_DEFAULT_DOMAINS[request.source],
          domainMap: request.domainMap ?? {},
          check: deps.links.check,
        },
        signal: stop.signal,
        onProgress: opts.onProgress,
      },
      {
        repo,
        links: deps.links,
        writeVisits: deps.writeVisits,
        clock,
        ...(deps.pace ? { pace: deps.pace } : {}),
        ...(deps.visitsWritten ? { visitsWritten: deps.visitsWritten } : {}),
        ...(deps.visitThread ? { visitThread: deps.visitThread } : {}),
      },
    );
    // Only a whole run moves the mark: one cut off may have left items whose visits stop short of it.
    if (end.state === 'done' && job.dry_run !== 1 && marks.through !== null)
      await repo.setVisitsMark(job.source_key, marks.through, clock.now());
    await repo.finishJob(job.id, end.state, clock.now(), stopMessage(end));
    return end;
  } finally {
    clearInterval(pulse);
  }
}

/** Waits until the job is no longer running (another instance stops it at its next pulse), or the wait is over. */
async function settled(repo: ImportsServiceDeps['repo'], id: number): Promise<ImportJobRow> {
  const until = Date.now() + CANCEL_WAIT_MS;
  for (;;) {
    const job = (await repo.findJob(id))!;
    if (job.state !== 'running' || Date.now() >= until) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Running recorded jobs in this process: each with its pulse (import_jobs.heartbeat_at, so that a job whose
 * process died is shown `interrupted`, never `running` forever), and stopped on request — by a DELETE on any
 * instance (seen on the pulse), or by a shutdown — at the next transaction boundary.
 */
export function createJobExecution(deps: ImportsServiceDeps) {
  const { repo } = deps;
  const running = new Map<number, { stop: AbortController; end: Promise<RunEnd> }>();

  return {
    /** Runs the job to its end; `opts.signal` (Ctrl-C) stops it as a shutdown does. */
    execute(job: ImportJobRow, request: ImportRequest, owner: ImportOwner, opts: RunOpts = {}): Promise<RunEnd> {
      const stop = new AbortController();
      const onOuter = () => stop.abort('shutdown' satisfies StopReason);
      // A stop that came before the run (Ctrl-C while the CLI opened the database) fires no listener added now.
      if (opts.signal?.aborted) onOuter();
      else opts.signal?.addEventListener('abort', onOuter, { once: true });
      const end = runJob(deps, job, request, owner, stop, opts).finally(() => {
        running.delete(job.id);
        opts.signal?.removeEventListener('abort', onOuter);
      });
      running.set(job.id, { stop, end });
      return end;
    },

    /** Stops a job whose cancellation is recorded: at once when it runs here, else once its instance sees it. */
    async stop(id: number): Promise<ImportJobRow> {
      const local = running.get(id);
      if (local) {
        local.stop.abort('cancel' satisfies StopReason);
        await local.end.catch(() => undefined);
      }
      return settled(repo, id);
    },

    /** A shutdown: every job of this process stops at its next transaction boundary, `interrupted`. */
    async stopAll(): Promise<void> {
      const all = [...running.values()];
      for (const { stop } of all) stop.abort('shutdown' satisfies StopReason);
      await Promise.allSettled(all.map((r) => r.end));
    },
  };
}
