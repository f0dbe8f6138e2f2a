import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../lib/clock.js';
import type { JobLeases } from './job-leases.js';

/**
 * Periodic background jobs (domain re-checks, sweeps, purges, click partitions), taking turns through the database
 * when several instances share it: before a run, an instance claims the job's row of `job_leases` (job-leases.ts),
 * which succeeds for one instance only once the last run started a period ago and nobody holds a lease on it. So a
 * job runs once per period whatever the number of instances. The holder renews its lease while it runs (a
 * heartbeat every quarter lease); an instance that dies in a run stops renewing it, and once it expires another
 * instance takes the job over. After a run, and at stop(), the lease is let go.
 *
 * Per process, as before: one run of a job at a time, failures logged, stop() waits for a run in progress. A job
 * whose work is this process's own (a buffer in memory) says `perInstance`: it runs in every instance, unclaimed.
 */
export interface PeriodicJob {
  name: string;
  everyMs: number;
  /**
   * `signal` aborts when the run should end early: this instance stops (stop()), or its lease was lost to another
   * instance. A short run may ignore it; a run that works for a while (the link checker's slice) must heed it.
   * Absent when the job is run outside a turn (app.runJob).
   */
  run: (signal?: AbortSignal) => Promise<unknown>;
  /**
   * Also run once at start-up in this instance, outside the turns (whenever the last turn was): for idempotent
   * work a changed setting should apply to at once (the click records' retention). Then in turns as usual.
   */
  runAtStart?: boolean;
  /** its work is this process's own (a buffer in memory): it runs in every instance, without a lease */
  perInstance?: boolean;
}

export type JobOutcome = 'ok' | 'failed';

/** One try at a job's turn. */
export interface JobAttempt {
  /** ok/failed: this instance ran it; not-due: not its turn yet, or another instance has it; busy: running here */
  outcome: JobOutcome | 'not-due' | 'busy';
  /** when this instance tries again */
  nextInMs: number;
}

/** A lease outlives a missed heartbeat or three (a stalled event loop, a slow database) before others take over. */
export const JOB_LEASE_MS = 60_000;
/** The shortest wait between two tries, whatever the clocks say. */
const MIN_WAIT_MS = 1_000;

export interface JobRunnerDeps {
  leases: JobLeases;
  log: FastifyBaseLogger;
  clock: Clock;
  /** this instance in `job_leases` and in the logs; default host:pid:random */
  holder?: string;
  leaseMs?: number;
  /** how often a running job renews its lease; default a quarter of the lease */
  heartbeatMs?: number;
  /** each run this instance made, when it ends (metrics) */
  onRun?: (job: string, outcome: JobOutcome) => void;
}

/** A name for this process among the instances: its host, pid and a random part (a restarted pid is another). */
export function instanceName(): string {
  return `${hostname().slice(0, 64)}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export function createJobRunner(deps: JobRunnerDeps) {
  const holder = deps.holder ?? instanceName();
  const leaseMs = deps.leaseMs ?? JOB_LEASE_MS;
  const log = deps.log.child({ holder });
  const run = createRun({ ...deps, log, holder, leaseMs, heartbeatMs: deps.heartbeatMs ?? Math.floor(leaseMs / 4) });
  const { attempt, startup, settled } = createTurns({ ...deps, log, holder, leaseMs, run });
  const jobs = new Map<string, PeriodicJob>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  function schedule(job: PeriodicJob, ms: number): void {
    const t = setTimeout(() => {
      timers.delete(t);
      if (stopped) return;
      attempt(job)
        .catch((err: unknown): JobAttempt => {
          log.error({ err, job: job.name }, 'could not claim a background job');
          return { outcome: 'not-due', nextInMs: job.everyMs };
        })
        .then(
          (a) => (stopped ? undefined : schedule(job, a.nextInMs)),
          () => undefined,
        );
    }, ms);
    t.unref();
    timers.add(t);
  }

  return {
    holder,
    /** Runs `job` every `everyMs` from now on, in its turn among the instances (and now too if it runs at start). */
    every(job: PeriodicJob): void {
      jobs.set(job.name, job);
      if (job.runAtStart) void startup(job);
      schedule(job, job.everyMs);
    },
    /** Tries the job's turn now (what its timer does): runs it if due and claimed, else says why not. */
    attempt(name: string): Promise<JobAttempt> {
      const job = jobs.get(name);
      if (!job) return Promise.reject(new Error(`no background job ${name}`));
      return attempt(job);
    },
    /** No new run; waits for the runs in progress (which let their leases go), then lets go of any lease left. */
    async stop(): Promise<void> {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      run.abortAll();
      await settled();
      await run.releaseLeft();
    },
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;

interface Last {
  started_at: number;
  lease_until: number | null;
}

const isDue = (last: Last, everyMs: number, now: number): boolean =>
  (last.lease_until === null || last.lease_until <= now) && last.started_at <= now - everyMs;

/** Until the last run is a period old and its lease expired (capped at a period: another instance may run it). */
function untilDue(last: Last, everyMs: number, now: number): number {
  const dueAt = Math.max(last.started_at + everyMs, last.lease_until ?? 0);
  return Math.min(everyMs, Math.max(MIN_WAIT_MS, dueAt - now));
}

/** A job's turns in this process: one at a time, each claimed first unless the job is per instance. */
function createTurns(
  deps: Pick<JobRunnerDeps, 'leases' | 'clock'> & {
    log: FastifyBaseLogger;
    holder: string;
    leaseMs: number;
    run: ReturnType<typeof createRun>;
  },
) {
  const { leases, clock, log, holder, leaseMs, run } = deps;
  const running = new Map<string, Promise<JobAttempt>>();

  async function claimAndRun(job: PeriodicJob): Promise<JobAttempt> {
    if (job.perInstance) return { outcome: await run.execute(job), nextInMs: job.everyMs };
    const now = clock.now();
    const last = await leases.find(job.name);
    if (last && !isDue(last, job.everyMs, now)) {
      return { outcome: 'not-due', nextInMs: untilDue(last, job.everyMs, now) };
    }
    // Lost to another instance claiming at the same moment: its run is this period's.
    if (!(await leases.claim({ name: job.name, holder, everyMs: job.everyMs, now, leaseMs }))) {
      return { outcome: 'not-due', nextInMs: job.everyMs };
    }
    if (last && last.finished_at === null) {
      const stale = { job: job.name, from: last.holder };
      log.warn(stale, 'background job taken over: its holder stopped renewing its lease');
    }
    return { outcome: await run.held(job, now), nextInMs: job.everyMs };
  }

  return {
    attempt(job: PeriodicJob): Promise<JobAttempt> {
      if (running.has(job.name)) return Promise.resolve({ outcome: 'busy', nextInMs: job.everyMs });
      const p = claimAndRun(job).finally(() => running.delete(job.name));
      running.set(job.name, p);
      return p;
    },
    /** A runAtStart job's run at start-up: unclaimed, but never beside a run of it in this process. */
    startup(job: PeriodicJob): Promise<JobAttempt> {
      if (running.has(job.name)) return Promise.resolve({ outcome: 'busy', nextInMs: job.everyMs });
      const p = run
        .execute(job)
        .then((outcome) => ({ outcome, nextInMs: job.everyMs }))
        .finally(() => running.delete(job.name));
      running.set(job.name, p);
      return p;
    },
    settled: () => Promise.allSettled(running.values()),
  };
}

/** A job's run, timed and logged (a failure logged, not thrown), and reported to onRun. */
async function executeJob(
  job: PeriodicJob,
  deps: Pick<JobRunnerDeps, 'onRun'> & { log: FastifyBaseLogger },
  signal: AbortSignal,
): Promise<JobOutcome> {
  const { log } = deps;
  const t0 = performance.now();
  let outcome: JobOutcome = 'ok';
  try {
    const result = await job.run(signal);
    const ms = Math.round(performance.now() - t0);
    const ran = { job: job.name, ms, ...(typeof result === 'number' ? { result } : {}) };
    // Runs that found nothing to do (a count of 0) and a job of every instance (every few seconds) would fill the
    // log: they show at debug only; job_leases says who ran each job last either way.
    if (job.perInstance || result === 0) log.debug(ran, 'background job ran');
    else log.info(ran, 'background job ran');
  } catch (err) {
    outcome = 'failed';
    log.error({ err, job: job.name }, 'background job failed');
  }
  deps.onRun?.(job.name, outcome);
  return outcome;
}

/** One run of a job: executed and logged, and for a claimed run its lease renewed while it lasts, then let go. */
function createRun(
  deps: JobRunnerDeps & { log: FastifyBaseLogger; holder: string; leaseMs: number; heartbeatMs: number },
) {
  const { leases, log, holder, clock } = deps;
  /** jobs whose lease could not be let go after their run (a database error): stop() tries again */
  const unreleased = new Set<string>();
  /** the runs under way here: stop() aborts them */
  const running = new Set<AbortController>();

  async function execute(job: PeriodicJob, controller = new AbortController()): Promise<JobOutcome> {
    running.add(controller);
    try {
      return await executeJob(job, deps, controller.signal);
    } finally {
      running.delete(controller);
    }
  }

  async function held(job: PeriodicJob, startedAt: number): Promise<JobOutcome> {
    unreleased.add(job.name);
    const controller = new AbortController();
    let lost = false;
    let done = false;
    const beat = setInterval(() => {
      leases.renew(job.name, holder, startedAt, clock.now() + deps.leaseMs).then(
        (mine) => {
          // A heartbeat answered after the run let its lease go finds none: nothing was lost.
          if (!mine && !lost && !done) {
            log.warn({ job: job.name }, 'background job lease lost: another instance may run it too');
          }
          lost ||= !mine;
          if (lost) controller.abort();
        },
        (err: unknown) => log.error({ err, job: job.name }, 'could not renew a background job lease'),
      );
    }, deps.heartbeatMs);
    beat.unref();
    try {
      return await execute(job, controller);
    } finally {
      clearInterval(beat);
      done = true;
      await leases.finish(job.name, holder, startedAt, clock.now()).then(
        () => unreleased.delete(job.name),
        (err: unknown) =>
          log.error({ err, job: job.name }, 'could not let a background job lease go; it frees itself when it expires'),
      );
    }
  }

  return {
    execute,
    held,
    /** Every run under way is told to end (stop()). */
    abortAll(): void {
      for (const c of running) c.abort();
    },
    async releaseLeft(): Promise<void> {
      if (unreleased.size === 0) return;
      await leases.releaseAll(holder).then(
        () => unreleased.clear(),
        (err: unknown) =>
          log.error({ err }, 'could not let background job leases go; they free themselves when they expire'),
      );
    },
  };
}
