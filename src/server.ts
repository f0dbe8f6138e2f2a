import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createStorage } from './db/database.js';
import { createRedis } from './infra/redis.js';

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
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 25_000);
    force.unref();
    app
      .close()
      .then(() => storage.close())
      .then(() => redis?.quit())
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
}

main().catch((err: unknown) => {
  process.stderr.write(`Ferry failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
