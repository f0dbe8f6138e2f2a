import type { Kysely } from 'kysely';
import type { Database, ImportJobRow } from '../../db/types.js';
import { AppError, notFound, validationError } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import type { JobCounts } from './import-batch.js';
import { runImport, type CreatedCode, type RunEnd } from './import-runner.js';
import { findImportOwner, type ImportedClickWriter, type ImportsRepository } from './imports.repository.js';
import { readSource, SOURCE_DEFAULT_DOMAINS, sourceProblems, type SourceSpec } from './sources/index.js';

/** What an import is asked to do (the CLI's options, the endpoint's body). */
export interface ImportRequest extends SourceSpec {
  owner?: string | undefined;
  dryRun?: boolean | undefined;
  onConflict?: 'skip' | 'fail' | undefined;
  /** FROM → TO host names; `default` stands for a default domain on either side */
  domainMap?: Record<string, string> | undefined;
}

export interface ImportsServiceDeps {
  db: Kysely<Database>;
  repo: ImportsRepository;
  writeVisits: ImportedClickWriter;
  clock: Clock;
  publicBaseUrl: string;
  created?: (codes: readonly CreatedCode[]) => void;
}

export type ImportsService = ReturnType<typeof createImportsService>;

/** The source's identity for idempotency: its kind and address, never a key or a password. */
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
  const database = r.database ? (() => { const u = new URL(r.database); u.password = ''; return u.toString(); })() : undefined;
  return JSON.stringify({ url: r.url, database, table_prefix: r.tablePrefix, owner: r.owner, domain_map: r.domainMap, csv: r.csv !== undefined || undefined });
}

/**
 * Import jobs (SPEC §20): `start` checks the request, records the job and returns it while the import runs
 * (the admin endpoint); `run` does the same and waits for the end (the CLI). Either way the job row says
 * the state and the counts as each batch commits.
 */
export function createImportsService(deps: ImportsServiceDeps) {
  const { repo, clock } = deps;

  async function prepare(request: ImportRequest, createdBy: number | null) {
    const problems = sourceProblems(request);
    for (const target of [request.url, request.database]) {
      if (target !== undefined && !URL.canParse(target)) problems.push(`${target} is not a URL`);
    }
    if (problems.length) throw validationError(problems.map((message) => ({ field: 'source', message })), 'The import cannot start');
    const owner = await findImportOwner(deps.db, request.owner);
    if (!owner) {
      throw new AppError('VALIDATION_ERROR', request.owner ? `No active user ${request.owner}` : 'No active admin owns the imported links: name --owner',
        [{ field: 'owner', message: 'must name an active user' }]);
    }
    const now = clock.now();
    const job = await repo.createJob({
      source: request.source, source_key: sourceKeyOf(request), options: optionsOf(request), owner_id: owner.id, created_by: createdBy,
      state: 'running', dry_run: request.dryRun ? 1 : 0, on_conflict: request.onConflict ?? 'skip', error: null, created_at: now, updated_at: now, finished_at: null,
    });
    return { job, owner };
  }

  async function execute(job: ImportJobRow, request: ImportRequest, signal?: AbortSignal, onProgress?: (c: JobCounts) => void): Promise<RunEnd> {
    const end = await runImport(readSource(request), {
      jobId: job.id, sourceKey: job.source_key, ownerId: Number(job.owner_id), domainOwnerId: Number(job.created_by ?? job.owner_id), dryRun: job.dry_run === 1, onConflict: job.on_conflict,
      plan: { publicBaseUrl: deps.publicBaseUrl, sourceDefaults: SOURCE_DEFAULT_DOMAINS[request.source], domainMap: request.domainMap ?? {} },
      signal, onProgress,
    }, { repo, writeVisits: deps.writeVisits, clock, ...(deps.created ? { created: deps.created } : {}) });
    await repo.finishJob(job.id, end.state, clock.now(), end.state === 'failed' ? end.error : null);
    return end;
  }

  return {
    /** Records the job and runs it in the background; the returned row is the job as it starts. */
    async start(request: ImportRequest, createdBy: number | null, onEnd?: (end: RunEnd) => void): Promise<ImportJobRow> {
      const { job } = await prepare(request, createdBy);
      void execute(job, request).then(onEnd, () => undefined);
      return job;
    },

    /** Runs the import to its end (or until `signal`), reporting counts after each batch. */
    async run(request: ImportRequest, opts: { signal?: AbortSignal; onProgress?: (c: JobCounts) => void } = {}) {
      const { job, owner } = await prepare(request, null);
      const end = await execute(job, request, opts.signal, opts.onProgress);
      return { end, job: (await repo.findJob(job.id))!, owner };
    },

    async get(id: number): Promise<{ job: ImportJobRow; items: Awaited<ReturnType<ImportsRepository['problemItems']>> }> {
      const job = await repo.findJob(id);
      if (!job) throw notFound('Import');
      return { job, items: await repo.problemItems(id, 1000) };
    },
  };
}
