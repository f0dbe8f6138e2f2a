import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createPrivateFile, writePrivateFile } from '../lib/private-files.js';
import { SqliteDatabase } from './sqlite-driver.js';

/** A directory one process holds (see lockDirectory); release() gives it up. */
export interface DirectoryLock {
  release(): void;
}

/** Another process (or another app in this one) holds the directory; `holder` is its pid when it said. */
export class DirectoryInUseError extends Error {
  constructor(
    readonly dir: string,
    purpose: string,
    readonly holder: number | null = null,
  ) {
    super(
      `${dir} is in use by another Ferry process${holder === null ? '' : ` (pid ${holder})`}: ${purpose}. Stop that process, or give this one another DATA_DIR.`,
    );
    this.name = 'DirectoryInUseError';
  }
}

/** Beside the lock, the holder's pid, so that a refused process can name it (SPEC §17). */
const HOLDER_FILE = 'lock.pid';

function holderOf(dir: string): number | null {
  try {
    const pid = Number(readFileSync(path.join(dir, HOLDER_FILE), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Holds `dir` for this process, or throws DirectoryInUseError at once when something else holds it. The lock is
 * SQLite's own: an exclusive lock on `dir/lock` taken in EXCLUSIVE locking mode and kept until release(). The
 * operating system drops it with the process, SIGKILL included, so a crash never leaves a stale lock to clean
 * up (a pid file would, and a reused pid after a reboot would block the start); a second connection in the same
 * process is refused too. The pid written beside it only names the holder in the refusal; it locks nothing.
 */
export function lockDirectory(dir: string, purpose: string): DirectoryLock {
  createPrivateFile(path.join(dir, 'lock'));
  const db = new SqliteDatabase(path.join(dir, 'lock'), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT;');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new DirectoryInUseError(dir, purpose, holderOf(dir));
    throw err;
  }
  // Written once the lock is held; a holder that died left its pid, which the next holder overwrites.
  try {
    writePrivateFile(path.join(dir, HOLDER_FILE), `${process.pid}\n`, 'w');
  } catch {
    // a full or read-only disk: the lock holds all the same, the refusal just cannot name the pid
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      if (holderOf(dir) === process.pid) rmSync(path.join(dir, HOLDER_FILE), { force: true });
      db.close();
    },
  };
}
