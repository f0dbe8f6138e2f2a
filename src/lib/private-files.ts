import { closeSync, fchmodSync, mkdirSync, openSync, writeSync, chmodSync } from 'node:fs';
import path from 'node:path';

/**
 * Ferry's own files are private (SPEC §25): DATA_DIR holds the JWT secret (enough to forge an admin's token),
 * password hashes, e-mail and visitors' addresses, and a backup holds all of them. A directory Ferry creates is
 * 0700 and a file 0600, set on the open descriptor after creation, so that the process's umask (which may be 0,
 * or may leave the owner without write) decides nothing. What already exists keeps the mode its owner gave it.
 *
 * SQLite creates a database's -wal, -shm and -journal files with the database file's own mode, so a database
 * file created here first (createPrivateFile) keeps all of them 0600.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` and its missing parents, each 0700; an existing directory is left as it is. */
export function makePrivateDir(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return;
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    chmodSync(d, PRIVATE_DIR_MODE);
    if (d === path.resolve(first) || d === path.dirname(d)) return;
  }
}

/**
 * Opens `file` with `flags` ('w', 'wx', 'a', …), creating it 0600; a file that was there is opened as it is
 * unless `tighten` (a file of Ferry's own that is written anew: its mode is set again).
 */
export function openPrivate(file: string, flags: string, tighten = false): number {
  const fd = openSync(file, flags, PRIVATE_FILE_MODE);
  try {
    if (tighten || flags.includes('x')) fchmodSync(fd, PRIVATE_FILE_MODE);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/** Creates `file` empty and 0600 unless it exists; whether it was created. */
export function createPrivateFile(file: string): boolean {
  let fd: number;
  try {
    fd = openPrivate(file, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  closeSync(fd);
  return true;
}

/** Writes `data` to `file`, 0600: 'wx' fails with EEXIST when it exists, 'w' replaces its content and mode. */
export function writePrivateFile(file: string, data: string | Uint8Array, flag: 'w' | 'wx'): void {
  const fd = openPrivate(file, flag, true);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
  } finally {
    closeSync(fd);
  }
}
