import type { Kysely } from 'kysely';
import { createStorage } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrator.js';
import type { CommandModule } from '../command.js';

/** `ferry migrate`: applies the pending migrations (a server start does the same) and exits. */
export const migrateCommand: CommandModule = (program, cli) => {
  program
    .command('migrate')
    .description('apply pending database migrations and exit (a server start applies them too; take a backup first)')
    .action(
      cli.action(async ({ out, config }) => {
        const storage = createStorage(config, (line) => out.warn(line));
        try {
          const applied = await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
          out.result({ applied }, applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
        } finally {
          await storage.close();
        }
      }),
    );
};
