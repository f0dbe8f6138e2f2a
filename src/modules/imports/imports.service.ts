import type { ImportJobRow } from '../../db/types.js';
import { AppError, notFound, validationError } from '../../lib/app-error.js';
import { createJobExecution, RESUME, STALE_AFTER_MS, type RunOpts } from './import-execution.js';
import type { RunEnd } from './import-runner.js';
import type { ImportRequest, ImportsServiceDeps } from './import-context.js';
import { findImportOwner, type ImportsRepository } from './imports.repository.js';
import { sourceProblems, type SourceSpec } from './sources/index.js';

export { HEARTBEAT_MS } from './import-execution.js';

export type ImportsService = ReturnType<typeof createImportsService>;

/** The source's identity for idempotency: its kind and address, never a key or a password (the owner is added per job). */
export function sourceKeyOf(spec: SourceSpec): string {
  if (spec.csv !== undefined) return `${spec.source}:csv`;
  if (spec.source === 'yourls') {
    const url = new URL(spec.database!);
    return `yourls:${url.hostname}:${url.port}${url.pathname}:${spec.tablePrefix ?? 'yourls_'}`;
  }
  const url = new URL(spec.url!);
  return `${spec.source}:${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

function optionsOf(r: ImportRequest): string {
  const database = r.database
    ? (() => {
        const u = new URL(r.database);
        u.password = '';
        return u.toString();
      })()
    : undefined;
  return JSON.stringify({
    url: r.url,
    database,
    table_prefix: r.tablePrefix,
    owner: r.owner,
    domain_map: r.domainMap,
    csv: r.csv !== undefined || undefined,
  });
}

/** The request checked (its source, its owner) and its job recorded, `running`. */
async function prepareJob(deps: ImportsServiceDeps, request: ImportRequest, createdBy: number | null) {
  const { repo, clock } = deps;
  const problems = sourceProblems(request);
  for (const target of [request.url, request.database]) {
    if (target !== undefined && !URL.canParse(target)) problems.push(`${target} is not a URL`);
  }
  if (problems.length)
    throw validationError(
      problems.map((message) => ({ field: 'source', message })),
      'The import cannot start',
    );
  const owner = await findImportOwner(deps.db, request.owner);
  if (!owner) {
    throw new AppError(
      'VALIDATION_ERROR',
      request.owner ? `No active user ${request.owner}` : 'No active admin owns the imported links: name --owner',
      [{ field: 'owner', message: 'must name an active user' }],
    );
  }
  const now = clock.now();
  const job = await repo.createJob(
    {
      source: request.source,
      source_key: `${sourceKeyOf(request)}#owner=${owner.id}`,
      options: optionsOf(request),
      owner_id: owner.id,
      created_by: createdBy,
      state: 'running',
      dry_run: request.dryRun ? 1 : 0,
      on_conflict: request.onConflict ?? 'skip',
      error: null,
      created_at: now,
      updated_at: now,
      finished_at: null,
      heartbeat_at: now,
    },
    {
      action: 'import.started',
      actor: createdBy === null ? 'cli' : { userId: createdBy },
      details: { source: request.source, owner_id: owner.id, dry_run: request.dryRun === true },
      at: now,
    },
  );
  return { job, owner };
}

/**
 * Import jobs (SPEC §20): `start` checks the request, records the job and returns it while the import runs
 * (the admin endpoint); `run` does the same and waits for the end (the CLI). Either way the job row says
 * the state and the counts as each batch commits.
 */
export function createImportsService(deps: ImportsServiceDeps) {
  const { repo, clock } = deps;
  const jobs = createJobExecution(deps);

  const prepare = (request: ImportRequest, createdBy: number | null) => prepareJob(deps, request, createdBy);

  return {
    /** Records the job and runs it in the background; the returned row is the job as it starts. */
    async start(
      request: ImportRequest,
      createdBy: number | null,
      onEnd?: (end: RunEnd) => void,
    ): Promise<ImportJobRow> {
      const { job, owner } = await prepare(request, createdBy);
      void jobs.execute(job, request, owner).then(onEnd, () => undefined);
      return job;
    },

    /** Runs the import to its end (or until `signal`), reporting counts after each transaction. */
    async run(request: ImportRequest, opts: RunOpts = {}) {
      const { job, owner } = await prepare(request, null);
      const end = await jobs.execute(job, request, owner, opts);
      return { end, job: (await repo.findJob(job.id))!, owner };
    },

    async get(
      id: number,
    ): Promise<{ job: ImportJobRow; items: Awaited<ReturnType<ImportsRepository['problemItems']>> }> {
      const job = await repo.findJob(id);
      if (!job) throw notFound('Import');
      return { job, items: await repo.problemItems(id, 1000) };
    },

    /**
     * DELETE /api/v1/imports/{id}: stops a running job at its next transaction boundary (state `cancelled`; what
     * it committed stays, every link whole). A job of this process stops at once; one of another instance at
     * its next pulse. A job that has ended: 409.
     */
    async cancel(id: number): Promise<ImportJobRow> {
      const job = await repo.findJob(id);
      if (!job) throw notFound('Import');
      if (job.state !== 'running' || !(await repo.requestCancel(id, clock.now()))) {
        throw new AppError('CONFLICT', `This import has ended (${job.state}); only a running import can be cancelled`);
      }
      return jobs.stop(id);
    },

    /** Jobs whose process stopped without ending them (a crash, a kill): `interrupted`, saying how to go on. */
    sweepInterrupted: (): Promise<number> =>
      repo.interruptStale(
        clock.now() - STALE_AFTER_MS,
        clock.now(),
        `interrupted (the process running it stopped): ${RESUME}`,
      ),

    /** A shutdown: every job of this process stops at its next transaction boundary, `interrupted`. */
    close: () => jobs.stopAll(),
  };
}
