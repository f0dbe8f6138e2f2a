import type { FastifyInstance } from 'fastify';
import type { AppModule } from './app-module.js';
import type { Modules } from './app-modules.js';
import type { Config } from './config.js';
import type { Storage } from './db/database.js';
import { loadBlockedHosts, type BlockedHosts } from './infra/blocked-hosts-file.js';
import { createJobLeases } from './infra/job-leases.js';
import { createJobRunner, type JobRunner, type JobRunnerDeps } from './infra/job-runner.js';
import type { Metrics } from './infra/metrics.js';
import { createPgOutboxFeed, startSqliteOutboxFeed } from './infra/outbox-feed.js';
import type { Clock } from './lib/clock.js';

/**
 * What buildApp (app.ts) starts beside its routes, and closes: the blocked hosts list, the first admin, the
 * link-change follower, the jobs.
 */

/**
 * BLOCKED_HOSTS_FILE's list, read before anything is opened so that a file that cannot be read stops the start
 * (SPEC §17). SIGHUP (server.ts) reads it again through app.reloadBlockedHosts, and so does a change of the file
 * once the app is built (its watch() is started last, and closed with the app: closeInOrder).
 */
export async function loadBlocklist(app: FastifyInstance, config: Config): Promise<BlockedHosts> {
  const blockedHosts = await loadBlockedHosts(config.blockedHostsFile, app.log);
  app.decorate('reloadBlockedHosts', () => blockedHosts.reload());
  return blockedHosts;
}

/** ADMIN_USERNAME/ADMIN_PASSWORD's admin, or else a warning naming the command that creates the first one. */
export async function ensureFirstAdmin(
  app: FastifyInstance,
  config: Config,
  core: Pick<Modules, 'usersModule' | 'instanceModule'>,
): Promise<void> {
  if (config.adminUsername && config.adminPassword) {
    const outcome = await core.usersModule.users.ensureAdmin(config.adminUsername, config.adminPassword);
    app.log.info({ admin: config.adminUsername, outcome }, 'first admin ensured');
  }
  const firstAdminCommand = await core.instanceModule.instance.firstAdminCommand();
  if (firstAdminCommand)
    app.log.warn(
      `No admin account exists yet: create the first one on this machine with \`${firstAdminCommand}\` (or set ADMIN_USERNAME and ADMIN_PASSWORD)`,
    );
}

/** The outbox's feed: LISTEN/NOTIFY as its wake-up on PostgreSQL, a read every 250 ms on the embedded engine. */
export async function followLinkChanges(
  app: FastifyInstance,
  config: Config,
  storage: Storage,
  modules: Pick<Modules, 'linksModule' | 'domainsModule' | 'redirectModule'>,
  timing: { heartbeatMs?: number; trustMs?: number } = {},
): Promise<{ close(): Promise<void> | void }> {
  const origin = modules.linksModule.changeOrigin;
  // The outbox's first consumer (db/outbox.ts): what visits read in memory, the link cache and the domain
  // registry (modules/redirect/link-cache-events.ts).
  // A serving process always has the visit (createModules builds it whenever `server` is given).
  const consumer = modules.redirectModule!.changeConsumer(modules.domainsModule.domains, app.log);
  const feed = { db: storage.db, origin, consumer, log: app.log };
  if (config.databaseUrl) return createPgOutboxFeed({ ...feed, connectionString: config.databaseUrl, ...timing });
  return startSqliteOutboxFeed(feed);
}

/** The job runner's timing and name for this instance (tests shorten the lease, or name the instance). */
export type JobRunnerOptions = Pick<JobRunnerDeps, 'holder' | 'leaseMs' | 'heartbeatMs'>;

/**
 * The modules' background jobs on their schedule, each in its turn among the instances that share the database
 * (infra/job-runner.ts); `app.jobs` to try a turn now, and `app.runJob` to run one now, outside any turn.
 */
export function scheduleJobs(
  app: FastifyInstance,
  modules: readonly AppModule[],
  deps: { storage: Storage; clock: Clock; metrics: Pick<Metrics, 'recordJobRun'>; options?: JobRunnerOptions },
): JobRunner {
  const runner = createJobRunner({
    ...deps.options,
    leases: createJobLeases(deps.storage.db),
    log: app.log,
    clock: deps.clock,
    onRun: (job, outcome) => deps.metrics.recordJobRun(job, outcome),
  });
  for (const m of modules) for (const job of m.jobs ?? []) runner.every(job);
  app.decorate('jobs', runner);
  // A job run now rather than at its next turn (a daily re-check that a test or an operator does not wait a day for).
  const jobs = new Map(modules.flatMap((m) => (m.jobs ?? []).map((j) => [j.name, j.run] as const)));
  app.decorate('runJob', async (name: string) => {
    const run = jobs.get(name);
    if (!run) throw new Error(`no background job ${name}`);
    return run();
  });
  return runner;
}

/** On close: compilers and jobs first, then the modules in reverse order, what instances share, the link-change follower. */
export function closeInOrder(
  app: FastifyInstance,
  parts: {
    compilers: { stop(): void };
    jobs: { stop(): Promise<void> };
    modules: readonly AppModule[];
    shared: { close(): Promise<void> };
    cacheBus: { close(): Promise<void> | void } | null;
    /** BLOCKED_HOSTS_FILE's watch */
    blockedHosts: { close(): void };
  },
): void {
  const { compilers, jobs, modules, shared, cacheBus, blockedHosts } = parts;
  app.addHook('onClose', async () => {
    compilers.stop();
    blockedHosts.close();
    await jobs.stop();
    // After in-flight requests, before the caller closes the database: no queued click is lost (clicks).
    for (const m of [...modules].reverse()) await m.close?.();
    await shared.close();
    await cacheBus?.close();
  });
}
