import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnEntry, type LoggedChild } from '../helpers/child-process.js';
import { TEST_PASSWORD_HASH_COST } from '../helpers/server-process.js';

/**
 * SPEC §18: BLOCKED_HOSTS_FILE is read at start and again when the process gets SIGHUP (server.ts) or the file
 * changes (issue 38: a signal sent to `npm start` never reached node). One engine: neither touches the database
 * (the list's effect is tested on both engines in test/modules/links/blocked-hosts.test.ts). Each step waits for
 * the log line of its own read (`by`, and a number of names no other step writes), never for time to pass.
 */
describe('reading BLOCKED_HOSTS_FILE again in a running server', () => {
  let dir: string;
  let file: string;
  let server: LoggedChild;
  let baseUrl: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-sighup-'));
    file = path.join(dir, 'blocked.txt');
    writeFileSync(file, 'phish.example\n');
    server = spawnEntry('src/server.ts', {
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      BLOCKED_HOSTS_FILE: file,
      PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
    });
    baseUrl = await server.waitFor(
      (e) => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(String(e.msg))?.[1],
      'listen',
    );
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async (url: string) =>
    (
      await fetch(`${baseUrl}/api/v1/links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ original_url: url }),
      })
    ).status;

  it('when the file changes and the process gets SIGHUP, then the new list applies without a restart', async () => {
    expect(server.logs.some((e) => e.msg === 'blocked hosts read' && e.hosts === 1)).toBe(true);
    expect(await create('https://phish.example/')).toBe(422);
    expect(await create('https://newly.example/')).toBe(201);
    writeFileSync(file, 'phish.example\n# reported today\nnewly.example\n');
    const seen = server.logs.length;
    server.child.kill('SIGHUP');
    const reread = (e: Record<string, unknown>) =>
      server.logs.indexOf(e) >= seen && e.msg === 'blocked hosts read' && e.by === 'SIGHUP';
    await server.waitFor((e) => (reread(e) ? e : undefined), 'read the list again');
    expect(await create('https://newly.example/')).toBe(422);
    expect(server.child.exitCode).toBeNull(); // still serving
  });

  it('when the file cannot be read at SIGHUP, then the list read before stays, the log says why, and a listed name still blocks its subdomains', async () => {
    writeFileSync(file, 'kept.example\n');
    const hup = async (msg: string) => {
      const seen = server.logs.length;
      server.child.kill('SIGHUP');
      return server.waitFor(
        (e) => (server.logs.indexOf(e) >= seen && e.msg === msg && e.by === 'SIGHUP' ? e : undefined),
        msg,
      );
    };
    expect(await hup('blocked hosts read')).toMatchObject({ hosts: 1 });
    expect(await create('https://www.kept.example/')).toBe(422);
    rmSync(file);
    try {
      await hup('BLOCKED_HOSTS_FILE cannot be read; the hosts read before stay blocked');
      expect(await create('https://www.kept.example/')).toBe(422);
      expect(await create('https://other.example/')).toBe(201);
      expect(server.child.exitCode).toBeNull();
    } finally {
      writeFileSync(file, 'phish.example\n');
    }
  });
  /** Does `change` to the file, then waits for the read it causes: `hosts` names read, or `failed`. */
  const changeRead = async (hosts: number | 'failed', change: () => void) => {
    const seen = server.logs.length;
    change();
    const msg =
      hosts === 'failed'
        ? 'BLOCKED_HOSTS_FILE cannot be read; the hosts read before stay blocked'
        : 'blocked hosts read';
    const read = (e: Record<string, unknown>) =>
      server.logs.indexOf(e) >= seen && e.by === 'change' && e.msg === msg && (hosts === 'failed' || e.hosts === hosts);
    return server.waitFor((e) => (read(e) ? e : undefined), `read ${hosts} after a change`);
  };
  const names = (n: number, last: string) =>
    `${Array.from({ length: n - 1 }, (_, i) => `filler-${i}.example`).join('\n')}\n${last}\n`;

  it('when the file is replaced by a rename (as editors save) or written in place, then the new list applies without a signal', async () => {
    const copy = path.join(dir, '.blocked.txt.swp');
    writeFileSync(copy, names(3, 'renamed.example'));
    await changeRead(3, () => renameSync(copy, file));
    expect(await create('https://renamed.example/')).toBe(422);
    await changeRead(4, () => writeFileSync(file, names(4, 'edited.example')));
    expect(await create('https://edited.example/')).toBe(422);
    expect(await create('https://renamed.example/')).toBe(201);
  });

  it('when the file is deleted, then the list read before stays and the log says why; when it is back, then it is read', async () => {
    await changeRead(5, () => writeFileSync(file, names(5, 'kept-too.example')));
    await changeRead('failed', () => rmSync(file));
    expect(await create('https://kept-too.example/')).toBe(422);
    await changeRead(6, () => writeFileSync(file, names(6, 'back.example')));
    expect(await create('https://back.example/')).toBe(422);
  });

  it('when the file is a symbolic link into a directory that is swapped (a Kubernetes ConfigMap), then the new list applies', async () => {
    for (const [version, n] of [
      ['v1', 7],
      ['v2', 8],
    ] as const) {
      mkdirSync(path.join(dir, version));
      writeFileSync(path.join(dir, version, 'blocked.txt'), names(n, `${version}.example`));
    }
    symlinkSync('v1', path.join(dir, '..data'));
    symlinkSync('..data/blocked.txt', path.join(dir, 'link.tmp'));
    await changeRead(7, () => renameSync(path.join(dir, 'link.tmp'), file));
    symlinkSync('v2', path.join(dir, '..data_tmp'));
    await changeRead(8, () => renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data')));
    expect(await create('https://v2.example/')).toBe(422);
    expect(await create('https://v1.example/')).toBe(201);
  });
});
