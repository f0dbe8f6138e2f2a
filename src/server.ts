import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createStorage } from './db/database.js';
import { closeRedis, createRedis } from './infra/redis.js';

/** After the drain bound, this long is left for the close hooks (click flush) and the database. */
const CLOSE_GRACE_MS = 5_000;

/** Process entry: configuration, the app, listen, graceful shutdown. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const storage = createStorage(config);
  const redis = config.redisUrl ? createRedis(config.redisUrl) : null;
  const app = await buildApp(config, { storage, redis });

  /**
   * SIGTERM / SIGINT (SPEC §8): app.close() stops accepting connections, closes idle keep-alive sockets and
   * waits for in-flight requests (requests still arriving on open sockets are served with Connection: close);
   * then the onClose hooks run (background jobs stop, queued clicks are flushed) and the database is closed.
   * Exit 0 when all of that finished in time. If requests are still running after SHUTDOWN_TIMEOUT_MS their
   * connections are cut so the flush and the database close can still happen, and the exit code is 1; if
   * even that hangs, exit 1 after a further grace period. A second signal exits at once.
   */
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
      app.log.error({ timeoutMs: config.shutdownTimeoutMs }, 'requests still in flight after the shutdown bound; closing their connections');
      app.server.closeAllConnections();
      const hard = setTimeout(() => {
        app.log.error('shutdown hooks did not finish; exiting');
        process.exit(1);
      }, CLOSE_GRACE_MS);
      hard.unref();
    }, config.shutdownTimeoutMs);
    drainTimer.unref();

    app
      .close()
      .then(() => storage.close())
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
  await app.listen({ port: config.port, host: config.host });
}

main().catch((err: unknown) => {
  process.stderr.write(`Ferry failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
