import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { ConfigError, loadConfig, type Config } from './config.js';
import { CLICK_PARTITIONS_EVERY_MS, maintainClickPartitions } from './db/click-partitions.js';
import { createStorage } from './db/database.js';
import { migrateToLatest } from './db/migrator.js';
import { connectionLossLogger } from './infra/dependency-faults.js';
import { closeRedis, createRedis, logRedisConnection, whenRedisReady } from './infra/redis.js';
import { createJobLeases } from './infra/job-leases.js';
import { createJobRunner } from './infra/job-runner.js';
import { systemClock } from './lib/clock.js';
import { startClickWorker } from './modules/clicks/index.js';

/**
 * `npm run worker`: the click worker of the scale-out setup (docs/deployment.md). It consumes the Redis click
 * stream the API instances append to and writes click records and rollups to PostgreSQL in batches; run one
 * or more (each is one consumer of the group; a dead one's entries are claimed by the others).
 *
 * SIGTERM / SIGINT: the batch in progress is written and acknowledged, then the process exits 0 (what is left
 * in the stream waits for the next worker). After SHUTDOWN_TIMEOUT_MS, or on a second signal, it exits 1;
 * a batch cut short is not lost: it stays pending and is claimed.
 */
function configOrExit(): Config & { redisUrl: string; databaseUrl: string } {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  const missing = [
    config.redisUrl ? null : 'REDIS_URL: the click worker reads the Redis click stream; set a redis:// URL',
    config.databaseUrl ? null : 'DATABASE_URL: the click worker writes to PostgreSQL; set a postgres:// URL',
  ].filter((m): m is string => m !== null);
  if (missing.length > 0) {
    process.stderr.write(`${missing.map((m) => `Invalid configuration: ${m}`).join('\n')}\n`);
    process.exit(1);
  }
  return config as Config & { redisUrl: string; databaseUrl: string };
}

async function main(): Promise<void> {
  const config = configOrExit();
  // The API's logger setup (pino through Fastify), without a server.
  const log = Fastify({ logger: { level: config.logLevel } }).log.child({ component: 'click-worker' });
  const storage = createStorage(config);
  storage.onConnectionError(connectionLossLogger(log, 'database'));
  // Under the migrator's advisory lock: a worker that starts before the API instances migrates too.
  await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  const redis = createRedis(config.redisUrl);
  logRedisConnection(redis, log, 'click-consumer');
  if (!(await whenRedisReady(redis))) log.warn('redis is not reachable yet; the worker retries until it is');

  // The API instances' click-partitions job, in the same turns (job_leases): once per period among them all.
  const jobs = createJobRunner({ leases: createJobLeases(storage.db), log, clock: systemClock });
  const maintainPartitions = () =>
    maintainClickPartitions(
      storage.db as unknown as Kysely<unknown>,
      systemClock.now(),
      config.clickRetentionMonths,
      log,
    );
  await maintainPartitions();
  jobs.every({ name: 'click-partitions', everyMs: CLICK_PARTITIONS_EVERY_MS, run: maintainPartitions });
  // The clicks module's consumer of the stream, writing as an API instance's in-process one does.
  const consumer = startClickWorker({
    config,
    storage,
    redis: { client: redis, prefix: config.redisKeyPrefix },
    log,
    clock: systemClock,
  });
  log.info(
    { consumer: consumer.name, prefix: config.redisKeyPrefix, batchSize: config.clickBatchSize },
    'click worker started',
  );

  stopOnSignals({ config, log, consumer, jobs, storage, redis });
}

/** SIGTERM / SIGINT: the batch in progress finishes, then the job runner, the database and Redis close; bounded. */
function stopOnSignals(parts: {
  config: Config;
  log: FastifyBaseLogger;
  consumer: ReturnType<typeof startClickWorker>;
  jobs: ReturnType<typeof createJobRunner>;
  storage: ReturnType<typeof createStorage>;
  redis: ReturnType<typeof createRedis>;
}): void {
  const { config, log, consumer, jobs, storage, redis } = parts;
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'click worker stopping: finishing the batch in progress');
    const bound = setTimeout(() => {
      log.error(
        { timeoutMs: config.shutdownTimeoutMs },
        'click worker did not stop in time; its unacknowledged entries will be claimed',
      );
      process.exit(1);
    }, config.shutdownTimeoutMs);
    bound.unref();
    consumer
      .stop()
      .then(() => jobs.stop())
      .then(() => storage.close())
      .then(() => closeRedis(redis))
      .then(() => {
        log.info('click worker stopped');
        process.exit(0);
      })
      .catch((err: unknown) => {
        log.error({ err }, 'click worker shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((err: unknown) => {
  process.stderr.write(`Ferry click worker failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
