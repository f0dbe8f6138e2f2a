import { randomBytes } from 'node:crypto';
import { open, statfs, unlink } from 'node:fs/promises';
import path from 'node:path';
import { NotReadyError, type ReadinessCheck } from '../lib/readiness-check.js';

/**
 * Whether the storage takes writes (SPEC §17: a full or read-only disk is `/readyz` failing, naming the
 * storage, while reads and redirects go on). Two signals: a write of the service's own that failed because
 * of the storage (any engine: SQLITE_FULL, ENOSPC, PostgreSQL's disk_full; reported through `failed()`),
 * which keeps readiness failing for FAILURE_WINDOW_MS; and, on the embedded engine, whose files are in
 * DATA_DIR, a probe of that directory at every check: its free space and a small write that is synced. A
 * probe that passes after the last failure ends that failure's window at once.
 */
export interface StorageHealth {
  /** a write failed because the storage is full or read-only */
  failed(): void;
  check: ReadinessCheck;
}

/** How long a failed write keeps readiness failing after it (writes that keep failing keep it failing). */
const FAILURE_WINDOW_MS = 10_000;
/** Below this much free space in DATA_DIR the next database page or journal write may not fit. */
export const MIN_FREE_BYTES = 1024 * 1024;
const PROBE_BYTES = 4096;

const STORAGE_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM']);

/** Writes, syncs and removes a small file in `dir`; rejects with the errno of a storage that refuses. */
async function probeWrite(dir: string): Promise<void> {
  const file = path.join(dir, `.write-probe-${randomBytes(4).toString('hex')}`);
  const handle = await open(file, 'w', 0o600);
  try {
    await handle.write(Buffer.alloc(PROBE_BYTES));
    await handle.sync();
  } finally {
    await handle.close();
    await unlink(file).catch(() => undefined);
  }
}

export function createStorageHealth(opts: { dataDir: string | null; now?: () => number }): StorageHealth {
  const now = opts.now ?? Date.now;
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    failed() {
      failedAt = now();
    },
    async check() {
      const started = now();
      if (opts.dataDir !== null) {
        const stats = await statfs(opts.dataDir).catch(() => null);
        if (stats && stats.bavail * stats.bsize < MIN_FREE_BYTES)
          throw new NotReadyError(`the storage under DATA_DIR is full (${stats.bavail * stats.bsize} bytes free)`);
        try {
          await probeWrite(opts.dataDir);
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (code !== undefined && STORAGE_ERRNO.has(code))
            throw new NotReadyError(`the storage under DATA_DIR refuses writes (${code})`);
          throw err;
        }
        // The probe wrote and synced after the last failure: writes land again.
        if (failedAt < started) failedAt = Number.NEGATIVE_INFINITY;
      }
      const ago = now() - failedAt;
      if (ago < FAILURE_WINDOW_MS)
        throw new NotReadyError(`a write failed ${Math.round(ago / 1000)} s ago: the storage is full or read-only`);
    },
  };
}
