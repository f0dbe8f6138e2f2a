import path from 'node:path';
import { SqliteDatabase } from './sqlite-driver.js';

/** A directory one process holds (see lockDirectory); release() gives it up. */
export interface DirectoryLock {
  release(): void;
}

/** Another process (or another app in this one) holds the directory. */
export class DirectoryInUseError extends Error {
  constructor(readonly dir: string, purpose: string) {
    super(`${dir} is in use by another Ferry process: ${purpose}. Stop that process, or give this one another DATA_DIR.`);
    this.name = 'DirectoryInUseError';
  }
}

/**
 * Holds `dir` for this process, or throws DirectoryInUseError at once when something else holds it. The lock is
 * SQLite's own: an exclusive lock on `dir/lock` taken in EXCLUSIVE locking mode and kept until release(). The
 * operating system drops it with the process, SIGKILL included, so a crash never leaves a stale lock to clean
 * up (a pid file would, and a reused pid after a reboot would block the start); a second connection in the same
 * process is refused too.
 */
export function lockDirectory(dir: string, purpose: string): DirectoryLock {
  const db = new SqliteDatabase(path.join(dir, 'lock'), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT;');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new DirectoryInUseError(dir, purpose);
    throw err;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
