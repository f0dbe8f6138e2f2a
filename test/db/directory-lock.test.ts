import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectoryInUseError, lockDirectory } from '../../src/db/directory-lock.js';
import { compiledEntry } from '../helpers/child-process.js';

const dir = mkdtempSync(path.join(tmpdir(), 'ferry-lock-'));
const ROOT = path.resolve(import.meta.dirname, '../..');

/** Another process that takes the lock: prints "held" (and keeps it until killed) or "in use", then exits 3. */
function otherProcess() {
  const script = `
    const { lockDirectory, DirectoryInUseError } = await import(${JSON.stringify(pathToFileURL(compiledEntry('src/db/directory-lock.ts')).href)});
    // The lock is kept referenced, as its holders do: a collected lock is a closed connection, and the lock goes.
    try { const lock = lockDirectory(${JSON.stringify(dir)}, 'test'); console.log('held'); setInterval(() => lock, 1000); }
    catch (err) { console.log(err instanceof DirectoryInUseError ? 'in use' : String(err)); process.exit(3); }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const said = new Promise<string>((resolve) =>
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())),
  );
  return { child, said };
}

/** One process per directory (src/db/directory-lock.ts), on SQLite's own lock: the click journal's guard. */
describe('the directory lock', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('when the directory is held here, then another process and a second lock in this process are refused; after release, it can be taken again', async () => {
    const lock = lockDirectory(dir, 'test');
    try {
      expect(() => lockDirectory(dir, 'its click journal belongs to one process')).toThrow(DirectoryInUseError);
      expect(() => lockDirectory(dir, 'its click journal belongs to one process')).toThrow(
        `${dir} is in use by another Ferry process (pid ${process.pid}): its click journal belongs to one process.`,
      );
      const other = otherProcess();
      expect(await other.said).toBe('in use');
      expect((await once(other.child, 'exit'))[0]).toBe(3);
    } finally {
      lock.release();
    }
    lockDirectory(dir, 'test').release();
  });

  it('when the process holding it is killed (SIGKILL), then the lock goes with it: no stale lock to clean up', async () => {
    const other = otherProcess();
    expect(await other.said).toBe('held');
    expect(() => lockDirectory(dir, 'test')).toThrow(DirectoryInUseError);
    other.child.kill('SIGKILL');
    await once(other.child, 'exit');
    const lock = lockDirectory(dir, 'test');
    lock.release();
  });
});
