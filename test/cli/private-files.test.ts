import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ByteReader, readTarHeader } from '../../src/cli/backup/tar.js';
import { runFerryProcess } from '../helpers/cli.js';
import { startServer } from '../helpers/server-process.js';

/** The most permissive mask there is: without Ferry's own modes every file would be world-writable. */
const OPEN_UMASK = 0o000;

/** Every directory and file under `dir` (relative name → permission bits), `dir` itself as '.'. */
function modesUnder(dir: string): Record<string, number> {
  const out: Record<string, number> = { '.': statSync(dir).mode & 0o777 };
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const child = path.join(rel, name);
      let mode: number;
      let isDir: boolean;
      try {
        const s = statSync(path.join(dir, child));
        [mode, isDir] = [s.mode & 0o777, s.isDirectory()];
      } catch {
        continue; // gone since the listing (the storage probe's file)
      }
      out[child] = mode;
      if (isDir) walk(child);
    }
  };
  walk('');
  return out;
}

const octal = (modes: Record<string, number>): Record<string, string> =>
  Object.fromEntries(Object.entries(modes).map(([k, v]) => [k, v.toString(8)]));

/** SPEC §25 "Files are private", issue 35 item 8 and issue 38 item 7, on real processes under umask 000. */
describe('files Ferry writes are private (embedded engine, real processes)', { timeout: 120_000 }, () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const tempDir = (): string => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ferry-private-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  it('when a server creates its DATA_DIR, then the directory is 0700 and the database, its -wal and -shm, the click journal, the locks and the JWT secret are 0600', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const server = await startServer({ DATA_DIR: dataDir }, [], { umask: OPEN_UMASK });
    cleanups.push(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    });
    const body = JSON.stringify({ original_url: 'https://example.com/private' });
    const made = await fetch(`${server.baseUrl}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(made.status).toBe(201);
    const code = ((await made.json()) as { short_code: string }).short_code;
    expect((await fetch(`${server.baseUrl}/${code}`, { redirect: 'manual' })).status).toBe(302); // a line in the journal

    const modes = modesUnder(dataDir);
    const expectedFiles = [
      'ferry.db',
      'ferry.db-wal',
      'ferry.db-shm',
      'jwt-secret',
      'lock',
      'lock.pid',
      'click-journal',
      'click-journal/lock',
    ];
    for (const name of expectedFiles) {
      expect(Object.keys(modes), name).toContain(name);
    }
    expect(Object.keys(modes).some((n) => /^click-journal\/clicks-\d+\.journal$/.test(n))).toBe(true);
    const expected = Object.fromEntries(
      Object.keys(modes).map((n) => [n, statSync(path.join(dataDir, n)).isDirectory() ? '700' : '600']),
    );
    expect(octal(modes)).toEqual(expected);
  });

  it('when ferry backup writes its file, then it is 0600 (also replacing a 0644 file with --force over a stale .partial), its entries are 0600, and a restore fills a new DATA_DIR with 0700 and 0600', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    // A command that opens the services: the database is made and migrated, and the JWT secret generated.
    const migrate = await runFerryProcess(['users', 'list'], { DATA_DIR: dataDir }, { umask: OPEN_UMASK });
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(octal(modesUnder(dataDir))).toMatchObject({ '.': '700', 'ferry.db': '600', 'jwt-secret': '600' });

    const file = path.join(dir, 'ferry.tar.gz');
    const first = await runFerryProcess(['backup', file], { DATA_DIR: dataDir }, { umask: OPEN_UMASK });
    expect(first.status, first.stderr).toBe(0);
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    chmodSync(file, 0o644);
    writeFileSync(`${file}.partial`, 'left over by a killed run', { mode: 0o666 });
    chmodSync(`${file}.partial`, 0o666);
    const again = await runFerryProcess(['backup', file, '--force'], { DATA_DIR: dataDir }, { umask: OPEN_UMASK });
    expect(again.status, again.stderr).toBe(0);
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');

    const reader = new ByteReader(Readable.from([gunzipSync(readFileSync(file))]));
    const entries: Record<string, string> = {};
    for (let e = await readTarHeader(reader); e !== null; e = await readTarHeader(reader)) {
      entries[e.name] = e.mode.toString(8);
      await reader.read(e.size + ((512 - (e.size % 512)) % 512));
    }
    expect(entries).toMatchObject({ 'ferry.db': '600', 'jwt-secret': '600' });

    const restoredDir = path.join(dir, 'restored', 'data');
    const restore = await runFerryProcess(['restore', file], { DATA_DIR: restoredDir }, { umask: OPEN_UMASK });
    expect(restore.status, restore.stderr).toBe(0);
    expect(octal(modesUnder(restoredDir))).toEqual({ '.': '700', 'ferry.db': '600', 'jwt-secret': '600' });
  });
});
