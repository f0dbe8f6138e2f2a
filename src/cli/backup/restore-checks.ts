import { MIGRATION_NAMES } from '../../db/migrator.js';
import { SqliteDatabase } from '../../db/sqlite-driver.js';
import { CliError } from '../cli-error.js';
import { DATABASE, FORMAT_VERSION, isManifestLike, MANIFEST, manifestProblem, type Manifest } from './layout.js';

/**
 * What `ferry restore` checks beyond the checksums (SPEC §25): SHA256SUMS proves the files are the ones the
 * archive lists, not that they are a Ferry backup; an archive whose manifest or database is garbage, with
 * checksums to match, must fail with a clear error (exit 1) before anything lands in DATA_DIR.
 */
export const unusable = (why: string): CliError => new CliError(`not a usable Ferry backup: ${why}`);

/** Migrations this Ferry does not know: the backup was made by a newer one. */
function unknownMigrations(names: readonly string[], ferryVersion: string): CliError | null {
  const unknown = names.filter((n) => !MIGRATION_NAMES.includes(n));
  if (unknown.length === 0) return null;
  const newer = `this backup was made by a newer Ferry (${ferryVersion}: migrations ${unknown.join(', ')} unknown here)`;
  return new CliError(`${newer}; restore it with that version or later`);
}

/** The manifest's bytes, read and checked field by field (a newer format is named as such, not as malformed). */
export function parseManifest(bytes: Buffer): Manifest {
  let m: unknown;
  try {
    m = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw unusable(`${MANIFEST} is not JSON`);
  }
  if (!isManifestLike(m))
    throw unusable(`${MANIFEST} is not a Ferry backup manifest (no format "ferry-backup" with a version)`);
  if (m.version > FORMAT_VERSION) {
    const by = typeof m.ferry_version === 'string' ? `, made by Ferry ${m.ferry_version}` : '';
    const reads = `this Ferry reads format ${FORMAT_VERSION}`;
    throw new CliError(`this backup is of format ${m.version}${by}; ${reads}: restore it with that version or later`);
  }
  const problem = manifestProblem(m);
  if (problem) throw unusable(`${MANIFEST} is malformed: ${problem}`);
  const manifest = m as unknown as Manifest;
  const newer = unknownMigrations(manifest.database.migrations, manifest.ferry_version);
  if (newer) throw newer;
  return manifest;
}

/** The names of the migrations the database has run; throws when it has no migration table. */
function migrationsOf(db: InstanceType<typeof SqliteDatabase>): string[] {
  const table = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
  if (table === undefined) throw unusable(`${DATABASE} holds no Ferry schema (no migration table)`);
  return (db.prepare('select name from kysely_migration order by name').all() as Array<{ name: unknown }>).map((r) =>
    String(r.name),
  );
}

/**
 * The extracted database passes SQLite's integrity check and has a schema this Ferry knows: at least one
 * migration, each known here, and the ones the manifest lists.
 */
export function checkRestoredDatabase(file: string, manifest: Manifest): void {
  let db: InstanceType<typeof SqliteDatabase> | null = null;
  let migrations: string[];
  try {
    db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
    const problems = (db.pragma('integrity_check') as Array<Record<string, unknown>>).map((r) =>
      String(Object.values(r)[0]),
    );
    if (problems.join() !== 'ok')
      throw unusable(`${DATABASE} fails SQLite's integrity check (${problems.slice(0, 3).join('; ')})`);
    migrations = migrationsOf(db);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw unusable(`${DATABASE} is not a readable SQLite database (${(err as Error).message})`);
  } finally {
    db?.close();
  }
  if (migrations.length === 0) throw unusable(`${DATABASE} holds no Ferry schema (no migration has run)`);
  const newer = unknownMigrations(migrations, manifest.ferry_version);
  if (newer) throw newer;
  if (migrations.join() !== [...manifest.database.migrations].sort().join()) {
    throw unusable(`${DATABASE}'s migrations are not the ones ${MANIFEST} lists`);
  }
}
