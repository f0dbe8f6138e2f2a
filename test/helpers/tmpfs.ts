import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A small tmpfs of a test's own (a full disk on demand): `mount -t tmpfs`, which needs root. Why it cannot be
 * had here, or null when it can (tried once, with a mount and an unmount).
 */
export function tmpfsMissing(): string | null {
  if (process.platform !== 'linux') return `tmpfs is Linux's, and this is ${process.platform}`;
  let probe: Tmpfs | null = null;
  try {
    probe = mountTmpfs(1);
    return null;
  } catch (err) {
    return `cannot mount a tmpfs here (${String((err as Error).message).split('\n')[0]})`;
  } finally {
    probe?.unmount();
  }
}

export interface Tmpfs {
  dir: string;
  /** fills what is left with a file until the file system says ENOSPC; `free()` removes it */
  fill(): { free(): void };
  unmount(): void;
}

export function mountTmpfs(megabytes: number): Tmpfs {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    fill() {
      const file = path.join(dir, `filler-${Date.now()}`);
      const fd = openSync(file, 'w');
      try {
        for (const size of [1024 * 1024, 4096, 1]) {
          const chunk = Buffer.alloc(size, 1);
          try {
            for (;;) writeSync(fd, chunk);
          } catch (err) {
            if ((err as { code?: string }).code !== 'ENOSPC') throw err;
          }
        }
      } finally {
        closeSync(fd);
      }
      return { free: () => unlinkSync(file) };
    },
    unmount() {
      // Lazy: a process that still has a file open there (a killed server's last handles) does not block it.
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
