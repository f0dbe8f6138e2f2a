import { createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { SqliteDatabase } from '../../db/sqlite-driver.js';
import { openPrivate, PRIVATE_FILE_MODE } from '../../lib/private-files.js';
import { clickJournalDir, isJournalSegment } from '../../modules/clicks/index.js';
import { CliError } from '../cli-error.js';
import type { Progress } from '../output.js';
import {
  DATABASE,
  FORMAT,
  FORMAT_VERSION,
  JOURNAL_DIR,
  JWT_SECRET_FILE,
  MANIFEST,
  SUMS,
  type Manifest,
} from './layout.js';
import { tarEnd, tarHeader, tarPadding } from './tar.js';

/** A file to archive: its name in the archive and where its bytes are now. */
interface Staged {
  name: string;
  file: string;
  size: number;
  mode: number;
}

export interface BackupOptions {
  dataDir: string;
  /** the backup file to write (refused if it exists, unless `overwrite`) */
  file: string;
  overwrite: boolean;
  /** JWT_SECRET is configured: the token key is not in DATA_DIR */
  jwtSecretFromEnvironment: boolean;
  ferryVersion: string;
  /** gzip level, 1 (fastest) to 9 */
  level: number;
  progress(total: number): Progress;
}

export interface BackupOutcome {
  file: string;
  bytes: number;
  ms: number;
  manifest: Manifest;
}

/**
 * The journal's segments, copied before the database: a click appended before the copy is then either in
 * the database copy (its journal's mark covers it: the replay skips it) or in the copied segment (replayed).
 * A segment the server deletes meanwhile had every click committed before it went, so before the database
 * copy. The live segment is cut at its last complete line (the server may be in the middle of a write).
 */
function copyJournal(dataDir: string, staging: string): Staged[] {
  const dir = clickJournalDir(dataDir);
  if (!existsSync(dir)) return [];
  const staged: Staged[] = [];
  for (const name of readdirSync(dir).filter(isJournalSegment).sort()) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path.join(dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // written and deleted since the listing
      throw err;
    }
    const whole = bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1);
    if (whole.length === 0) continue;
    const file = path.join(staging, `journal-${name}`);
    writeFileSync(file, whole);
    staged.push({ name: `${JOURNAL_DIR}/${name}`, file, size: whole.length, mode: PRIVATE_FILE_MODE });
  }
  return staged;
}

/**
 * A consistent copy of the live database through SQLite's online backup API. Pages copied in several steps
 * start over whenever another connection (the server) writes in between, which under steady writes may be
 * forever; so after the first step everything left is copied in one step, inside one read transaction of
 * the source (WAL: the server's writes go on meanwhile).
 */
async function copyDatabase(source: string, target: string): Promise<void> {
  const db = new SqliteDatabase(source, { fileMustExist: true, timeout: 10_000 });
  try {
    await db.backup(target, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
}

/** What the copy holds, for the manifest; the copy leaves WAL mode so that it is one self-contained file. */
function describeDatabase(file: string): Omit<Manifest['database'], 'bytes'> {
  const db = new SqliteDatabase(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
    const count = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    const migrations = (
      db.prepare('select name from kysely_migration order by name').all() as Array<{ name: string }>
    ).map((r) => r.name);
    return { file: DATABASE, migrations, users: count('users'), links: count('links'), clicks: count('clicks') };
  } finally {
    db.close();
  }
}

/** The archive's bytes (before compression): each file with its header, then SHA256SUMS and the end blocks. */
async function* archive(
  files: readonly Staged[],
  manifest: Buffer,
  moved: (n: number) => void,
): AsyncGenerator<Buffer> {
  const sums: string[] = [];
  const entry = async function* (
    name: string,
    size: number,
    mode: number,
    chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  ): AsyncGenerator<Buffer> {
    yield tarHeader({ name, size, mode, mtimeMs: Date.now() });
    const hash = createHash('sha256');
    let seen = 0;
    for await (const chunk of chunks) {
      hash.update(chunk);
      seen += chunk.length;
      moved(chunk.length);
      yield chunk;
    }
    if (seen !== size) throw new Error(`${name} changed while it was archived`);
    yield tarPadding(size);
    sums.push(`${hash.digest('hex')}  ${name}`);
  };
  yield* entry(MANIFEST, manifest.length, 0o644, [manifest]);
  for (const f of files) yield* entry(f.name, f.size, f.mode, createReadStream(f.file, { highWaterMark: 1 << 20 }));
  const text = Buffer.from(`${sums.join('\n')}\n`);
  yield* entry(SUMS, text.length, 0o644, [text]);
  yield tarEnd();
}

/** Writes the archive next to `file` and renames it into place once complete and on disk. */
async function writeArchive(
  file: string,
  files: readonly Staged[],
  manifest: Buffer,
  level: number,
  progress: Progress,
): Promise<number> {
  const partial = `${file}.partial`;
  let done = 0;
  try {
    // 0600 whatever the umask, also over a .partial left by an earlier run: the archive holds the JWT secret (SPEC §25).
    const out = createWriteStream(partial, { fd: openPrivate(partial, 'w', true) });
    await pipeline(
      Readable.from(archive(files, manifest, (n) => progress.update((done += n)))),
      createGzip({ level }),
      out,
    );
    const fd = openSync(partial, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(partial, file);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  return statSync(file).size;
}

/** `ferry backup FILE`: one file holding the database, the token key and the click journal (layout.ts). */
export async function backupDataDir(opts: BackupOptions): Promise<BackupOutcome> {
  const started = performance.now();
  const dbFile = path.join(opts.dataDir, DATABASE);
  if (!existsSync(dbFile))
    throw new CliError(`there is no database to back up in DATA_DIR (${path.resolve(opts.dataDir)}: no ${DATABASE})`);
  if (existsSync(opts.file) && !opts.overwrite)
    throw new CliError(`${opts.file} exists; choose another name or add --force to replace it`);
  const staging = mkdtempSync(path.join(path.dirname(path.resolve(opts.file)), '.ferry-backup-'));
  try {
    const journal = copyJournal(opts.dataDir, staging);
    const dbCopy = path.join(staging, DATABASE);
    await copyDatabase(dbFile, dbCopy);
    const database = { ...describeDatabase(dbCopy), bytes: statSync(dbCopy).size };
    const files: Staged[] = [{ name: DATABASE, file: dbCopy, size: database.bytes, mode: PRIVATE_FILE_MODE }];
    const secretFile = path.join(opts.dataDir, JWT_SECRET_FILE);
    if (existsSync(secretFile)) {
      files.push({ name: JWT_SECRET_FILE, file: secretFile, size: statSync(secretFile).size, mode: PRIVATE_FILE_MODE });
    }
    files.push(...journal);
    const manifest: Manifest = {
      format: FORMAT,
      version: FORMAT_VERSION,
      created_at: new Date().toISOString(),
      ferry_version: opts.ferryVersion,
      database,
      jwt_secret: opts.jwtSecretFromEnvironment ? 'environment' : 'file',
      click_journal: { segments: journal.length, bytes: journal.reduce((n, s) => n + s.size, 0) },
    };
    const progress = opts.progress(files.reduce((n, f) => n + f.size, 0));
    const bytes = await writeArchive(
      opts.file,
      files,
      Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
      opts.level,
      progress,
    );
    progress.stop();
    return { file: opts.file, bytes, ms: Math.round(performance.now() - started), manifest };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
