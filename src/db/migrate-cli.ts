/** `npm run migrate`: applies pending migrations to the configured database and exits. */
import type { Kysely } from 'kysely';
import { ConfigError, loadConfig } from '../config.js';
import { createStorage } from './database.js';
import { migrateToLatest } from './migrator.js';

try {
  const config = loadConfig(process.env);
  const storage = createStorage(config);
  const applied = await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  await storage.close();
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : `migration failed: ${(err as Error).message}`}\n`);
  process.exit(1);
}
