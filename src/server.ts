import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createStorage } from './db/database.js';
import { lockDirectory } from './db/directory-lock.js';
import { drainConnections } from './infra/http-server.js';
import { closeRedis, createRedis } from './infra/redis.js';
import { makePrivateDir } from './lib/private-files.js';

/** After the drain bound, this long is left for the close hooks (click flush) and the database. */
const CLOSE_GRACE_MS = 5_000;

/** The configuration, or exit 1 with its readable errors. */
function configOrExit(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/**
 * SIGTERM / SIGINT (SPEC §8, §12, §17): readiness fails, the listener closes (new connections are refused),
 * and every answer from now on says Connection: close, so each connection ends after its next answer or at
 * its keep-alive timeout, never under a request (drainConnections); once none is
 * left, app.close() runs the close hooks (background jobs stop, queued clicks are flushed) and the database
 * is closed.
 * Exit 0 when all of that finished in time. If requests are still running after SHUTDOWN_TIMEOUT_MS their
 * connections are cut so the flush and the database close can still happen, and the exit code is 1; if
 * even that hangs, exit 1 after a further grace period. A second signal exits at once.
 */
function shutdownOnSignals(parts: {
  app: Awaited<ReturnType<typeof buildApp>>;
  config: Config;
  storage: ReturnType<typeof createStorage>;
  redis: ReturnType<typeof createRedis> | null;
  dirLock: ReturnType<typeof lockDirectory> | null;
}): void {
  const { app, config, storage, redis, dirLock } = parts;
  let closing = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    const started = Date.now();
    app.log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: draining in-flight requests');
    let forced = false;
    const drainTimer = setTimeout(() => {
      forced = true;
      app.log.error(
        { timeoutMs: config.shutdownTimeoutMs },
        'requests still in flight after the shutdown bound; closing their connections',
      );
      app.server.closeAllConnections();
      const hard = setTimeout(() => {
        app.log.error('shutdown hooks did not finish; exiting');
        process.exit(1);
      }, CLOSE_GRACE_MS);
      hard.unref();
    }, config.shutdownTimeoutMs);
    drainTimer.unref();

    // The listener waits for what its accept queue held at the signal for half the drain bound at most.
    drainConnections(app.server, config.shutdownTimeoutMs / 2)
      .then(() => app.close())
      .then(() => storage.close())
      .then(() => dirLock?.release())
      .then(() => (redis ? closeRedis(redis) : undefined))
      .then(() => {
        clearTimeout(drainTimer);
        app.log.info({ ms: Date.now() - started, forced }, 'shut down');
        process.exit(forced ? 1 : 0);
      })
      .catch((err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

/** Process entry: configuration, the app, listen, graceful shutdown. */
async function main(): Promise<void> {
  const config = configOrExit();
  // One server process per DATA_DIR on the embedded engine, whatever CLICK_JOURNAL says (SPEC §17): two would
  // each cache links and hold clicks of their own over one database file. Held (referenced: the handle would
  // be collected, and the lock with it) until the database is closed at shutdown, or the process ends.
  if (config.databaseUrl === null) makePrivateDir(config.dataDir);
  const dirLock =
    config.databaseUrl === null
      ? lockDirectory(config.dataDir, 'one server process serves the embedded database in a DATA_DIR')
      : null;
  const storage = createStorage(config);
  const redis = config.redisUrl ? createRedis(config.redisUrl) : null;
  const app = await buildApp(config, { storage, redis });

  shutdownOnSignals({ app, config, storage, redis, dirLock });
  // SIGHUP: BLOCKED_HOSTS_FILE is read again (SPEC §18); the reload logs what it read, or why it kept the old list.
  process.on('SIGHUP', () => {
    void app.reloadBlockedHosts();
  });
  await app.listen({ port: config.port, host: config.host });
  // What no request has compiled yet, compiled in slices now that the process answers (lazy-compilers.ts).
  const warming = performance.now();
  void app.compilers
    .warm(10, (err) => app.log.error({ err }, 'a schema does not compile; its route answers 500'))
    .then(() => {
      if (app.compilers.pending() === 0)
        app.log.info({ ms: Math.round(performance.now() - warming) }, 'schema compilers warmed');
    });
}

main().catch((err: unknown) => {
  process.stderr.write(`Ferry failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
