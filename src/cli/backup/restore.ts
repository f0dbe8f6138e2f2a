import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import { makePrivateDir, openPrivate, PRIVATE_FILE_MODE } from '../../lib/private-files.js';
import { CliError } from '../cli-error.js';
import type { Progress } from '../output.js';
import { DATABASE, isBackupEntry, JOURNAL_DIR, JWT_SECRET_FILE, MANIFEST, SUMS, type Manifest } from './layout.js';
import { checkRestoredDatabase, parseManifest, unusable as bad } from './restore-checks.js';
import { ByteReader, readTarHeader } from './tar.js';

export interface RestoreOptions {
  file: string;
  dataDir: string;
  progress(total: number): Progress;
}

export interface RestoreOutcome {
  dataDir: string;
  ms: number;
  manifest: Manifest;
}

/** Names a directory may hold and still count as empty (a fresh file system's). */
const IGNORED = new Set(['lost+found']);

/** A restore fills an empty DATA_DIR only: it never mixes a backup with another instance's files. */
function assertEmpty(dataDir: string): void {
  if (!existsSync(dataDir)) return;
  if (!statSync(dataDir).isDirectory()) throw new CliError(`DATA_DIR (${dataDir}) is not a directory`);
  const present = readdirSync(dataDir).filter((n) => !IGNORED.has(n));
  if (present.length > 0) {
    throw new CliError(
      `DATA_DIR (${dataDir}) is not empty (${present.slice(0, 5).join(', ')}${present.length > 5 ? ', …' : ''}): restore fills an empty directory only. Point DATA_DIR at a new directory, or move these files away first`,
    );
  }
}

/** A small entry (the manifest, the checksums) read into memory. */
async function readSmall(reader: ByteReader, size: number, name: string): Promise<Buffer> {
  if (size > 1 << 20) throw bad(`${name} is ${size} bytes`);
  const bytes = await reader.read(size);
  if (bytes.length < size) throw bad('the file ends early (truncated?)');
  return bytes;
}

/** Copies an entry's bytes into `target`, returning their SHA-256. */
async function extractFile(reader: ByteReader, size: number, target: string): Promise<string> {
  const hash = createHash('sha256');
  const fd = openPrivate(target, 'wx');
  try {
    for (let left = size; left > 0;) {
      const chunk = await reader.read(Math.min(left, 1 << 20));
      if (chunk.length === 0) throw bad('the file ends early (truncated?)');
      hash.update(chunk);
      for (let at = 0; at < chunk.length;) at += writeSync(fd, chunk, at);
      left -= chunk.length;
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

interface Extracted {
  manifest: Manifest;
  /** SHA-256 of each file written to the staging directory */
  hashes: Map<string, string>;
  sums: string;
}

/** Reads the archive into `staging`, accepting only the entries a backup holds, the manifest first. */
async function extract(file: string, staging: string, progress: Progress): Promise<Extracted> {
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  const gunzip = createGunzip();
  let read = 0;
  source.on('data', (c) => progress.update((read += c.length)));
  source.on('error', (err) => gunzip.destroy(err));
  source.pipe(gunzip);
  const reader = new ByteReader(gunzip);
  let manifest: Manifest | null = null;
  let sums: string | null = null;
  const hashes = new Map<string, string>();
  makePrivateDir(path.join(staging, JOURNAL_DIR));
  for (let entry = await readTarHeader(reader); entry !== null; entry = await readTarHeader(reader)) {
    if (!isBackupEntry(entry.name) || hashes.has(entry.name)) throw bad(`unexpected entry ${entry.name}`);
    if (manifest === null && entry.name !== MANIFEST) throw bad(`it does not start with ${MANIFEST}`);
    if (entry.name === MANIFEST) {
      const bytes = await readSmall(reader, entry.size, MANIFEST);
      hashes.set(MANIFEST, createHash('sha256').update(bytes).digest('hex'));
      manifest = parseManifest(bytes);
    } else if (entry.name === SUMS) sums = (await readSmall(reader, entry.size, SUMS)).toString('utf8');
    else hashes.set(entry.name, await extractFile(reader, entry.size, path.join(staging, entry.name)));
    await reader.read((512 - (entry.size % 512)) % 512);
  }
  if (manifest === null || sums === null) throw bad(`${manifest === null ? MANIFEST : SUMS} is missing`);
  return { manifest, hashes, sums };
}

/** Every file against SHA256SUMS: a damaged or edited backup is refused before anything lands in DATA_DIR. */
function verify({ hashes, sums }: Extracted): void {
  const listed = new Map(
    sums
      .trim()
      .split('\n')
      .map((line) => {
        const [hash, name] = line.split(/ [ *]/);
        return [name ?? '', hash ?? ''] as const;
      }),
  );
  for (const [name, hash] of hashes) {
    if (listed.get(name) !== hash) throw bad(`${name} does not match its checksum (damaged file?)`);
  }
  for (const name of listed.keys()) if (!hashes.has(name)) throw bad(`${name} is listed in ${SUMS} but missing`);
  if (!hashes.has(DATABASE)) throw bad(`${DATABASE} is missing`);
}

/** Moves the verified files from the staging directory into DATA_DIR (renames within one file system). */
function install(staging: string, dataDir: string, names: readonly string[]): void {
  renameSync(path.join(staging, DATABASE), path.join(dataDir, DATABASE));
  if (names.includes(JWT_SECRET_FILE)) {
    chmodSync(path.join(staging, JWT_SECRET_FILE), PRIVATE_FILE_MODE);
    renameSync(path.join(staging, JWT_SECRET_FILE), path.join(dataDir, JWT_SECRET_FILE));
  }
  if (names.some((n) => n.startsWith(`${JOURNAL_DIR}/`)))
    renameSync(path.join(staging, JOURNAL_DIR), path.join(dataDir, JOURNAL_DIR));
}

/** `ferry restore FILE`: an empty DATA_DIR filled from a backup (backup.ts), checked before anything is moved in. */
export async function restoreDataDir(opts: RestoreOptions): Promise<RestoreOutcome> {
  const started = performance.now();
  if (!existsSync(opts.file)) throw new CliError(`${opts.file} does not exist`);
  const dataDir = path.resolve(opts.dataDir);
  assertEmpty(dataDir);
  makePrivateDir(dataDir);
  const staging = mkdtempSync(path.join(dataDir, '.ferry-restore-'));
  try {
    const progress = opts.progress(statSync(opts.file).size);
    let extracted: Extracted;
    try {
      extracted = await extract(opts.file, staging, progress);
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw bad((err as Error).message);
    } finally {
      progress.stop();
    }
    verify(extracted);
    checkRestoredDatabase(path.join(staging, DATABASE), extracted.manifest);
    install(staging, dataDir, [...extracted.hashes.keys()]);
    return { dataDir, ms: Math.round(performance.now() - started), manifest: extracted.manifest };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
