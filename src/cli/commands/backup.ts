import path from 'node:path';
import { recordAudit } from '../../db/audit-log.js';
import { backupDataDir } from '../backup/backup.js';
import { restoreDataDir } from '../backup/restore.js';
import type { Manifest } from '../backup/layout.js';
import { usageError } from '../cli-error.js';
import { packageVersion } from '../package-info.js';
import type { CommandContext, CommandModule } from '../command.js';

const MiB = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;

/** With PostgreSQL the database is not Ferry's file to copy: its own tools are (docs/backup.md). */
function refusePostgres(ctx: CommandContext, what: 'backup' | 'restore'): void {
  if (!ctx.config.databaseUrl) return;
  throw usageError(
    what === 'backup'
      ? 'DATABASE_URL is set: the data is in PostgreSQL, and pg_dump is the tool that backs it up (pg_dump --format=custom --file=ferry.dump "$DATABASE_URL"). Keep JWT_SECRET with the dump: without it, tokens and API keys issued before do not work. See docs/backup.md'
      : 'DATABASE_URL is set: the data is in PostgreSQL, and pg_restore is the tool that restores a pg_dump (pg_restore --dbname="$DATABASE_URL" ferry.dump), with the same JWT_SECRET as before. See docs/backup.md',
  );
}

const contents = (m: Manifest): string =>
  `${m.database.users} users, ${m.database.links} links, ${m.database.clicks} clicks`;

async function backup(ctx: CommandContext, file: string, opts: { force?: boolean; level: string }): Promise<void> {
  refusePostgres(ctx, 'backup');
  const level = Number(opts.level);
  if (!Number.isInteger(level) || level < 1 || level > 9)
    throw usageError('--level must be an integer from 1 (fastest) to 9 (smallest)');
  if (ctx.config.redisUrl)
    ctx.out.warn('REDIS_URL is set: clicks still waiting in the Redis stream are not in the backup');
  const result = await backupDataDir({
    dataDir: ctx.config.dataDir,
    file,
    overwrite: Boolean(opts.force),
    level,
    jwtSecretFromEnvironment: ctx.config.jwtSecret !== null,
    ferryVersion: packageVersion(),
    progress: (total) => ctx.out.progress('backup', total, 'bytes'),
  });
  const m = result.manifest;
  // SPEC §23: recorded in the live database once the file is whole (so the backup itself does not hold it).
  await recordAudit((await ctx.services()).storage.db, {
    action: 'backup.created',
    actor: 'cli',
    target: { type: 'backup', id: path.basename(result.file) },
    details: { bytes: result.bytes, users: m.database.users, links: m.database.links },
  });
  ctx.out.result({ file: path.resolve(result.file), bytes: result.bytes, ms: result.ms, manifest: m }, [
    `backup written: ${result.file} (${MiB(result.bytes)}) in ${(result.ms / 1000).toFixed(1)} s`,
    `  database: ${contents(m)} (${MiB(m.database.bytes)} uncompressed)`,
    `  click journal: ${m.click_journal.segments} segment(s), ${MiB(m.click_journal.bytes)}`,
    m.jwt_secret === 'file'
      ? '  token key: DATA_DIR/jwt-secret is in the backup: keep the file as secret as the key itself'
      : '  token key: JWT_SECRET comes from the environment and is NOT in the backup: keep it with the backup',
  ]);
}

async function restore(ctx: CommandContext, file: string): Promise<void> {
  refusePostgres(ctx, 'restore');
  const result = await restoreDataDir({
    file,
    dataDir: ctx.config.dataDir,
    progress: (total) => ctx.out.progress('restore', total, 'bytes'),
  });
  const m = result.manifest;
  if (m.jwt_secret === 'environment')
    ctx.out.warn(
      'the backed-up server took JWT_SECRET from the environment: start this one with the same JWT_SECRET, or tokens and API keys issued before the backup will not work',
    );
  else if (ctx.config.jwtSecret !== null)
    ctx.out.warn(
      'JWT_SECRET is set, so the server will use it instead of the restored DATA_DIR/jwt-secret: unset it, or tokens and API keys issued before the backup will not work',
    );
  // SPEC §23: recorded in the restored database (opening it applies this build's migrations, as a start would).
  await recordAudit((await ctx.services()).storage.db, {
    action: 'backup.restored',
    actor: 'cli',
    target: { type: 'backup', id: path.basename(file) },
    details: { backup_created_at: m.created_at, ferry_version: m.ferry_version },
  });
  ctx.out.result({ data_dir: result.dataDir, ms: result.ms, manifest: m }, [
    `restored ${file} into ${result.dataDir} in ${(result.ms / 1000).toFixed(1)} s: ${contents(m)} as of ${m.created_at} (Ferry ${m.ferry_version})`,
    m.click_journal.segments > 0
      ? `  the click journal's ${m.click_journal.segments} segment(s) are written to the database at the next start (each click once)`
      : '  the click journal was empty',
    '  start the server with this DATA_DIR (npm start); it applies any newer migrations first',
  ]);
}

/** `ferry backup FILE` and `ferry restore FILE` (docs/backup.md). */
export const backupCommands: CommandModule = (program, cli) => {
  program
    .command('backup')
    .description(
      'write one file with a consistent copy of the embedded database, the token key (DATA_DIR/jwt-secret) and the click journal, while the server runs',
    )
    .argument('<file>', 'the backup file to write (e.g. ferry-2026-11-21.tar.gz)')
    .option('--force', 'replace the file if it exists')
    .option('--level <1-9>', 'gzip compression level: 1 fastest, 9 smallest', '1')
    .action(cli.action(backup));
  program
    .command('restore')
    .description('fill an empty DATA_DIR from a backup file (refuses a non-empty one); then start the server on it')
    .argument('<file>', 'a file written by ferry backup')
    .action(cli.action(restore));
};
