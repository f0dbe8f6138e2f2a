import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnEntry, type LoggedChild } from '../helpers/child-process.js';
import { TEST_PASSWORD_HASH_COST } from '../helpers/server-process.js';

/**
 * SPEC §18: BLOCKED_HOSTS_FILE is read at start and again when the process gets SIGHUP (server.ts). One
 * engine: the signal and the reload do not touch the database (the list's effect is tested on both engines in
 * test/modules/links/blocked-hosts.test.ts).
 */
describe('SIGHUP', () => {
  let dir: string;
  let file: string;
  let server: LoggedChild;
  let baseUrl: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-sighup-'));
    file = path.join(dir, 'blocked.txt');
    writeFileSync(file, 'phish.example\n');
    server = spawnEntry('src/server.ts', {
      HOST: '127.0.0.1', PORT: '0', DATA_DIR: path.join(dir, 'data'), BLOCKED_HOSTS_FILE: file, PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
    });
    baseUrl = await server.waitFor((e) => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(String(e.msg))?.[1], 'listen');
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async (url: string) =>
    (await fetch(`${baseUrl}/api/v1/links`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ original_url: url }) })).status;

  it('when the file changes and the process gets SIGHUP, then the new list applies without a restart', async () => {
    expect(server.logs.some((e) => e.msg === 'blocked hosts read' && e.hosts === 1)).toBe(true);
    expect(await create('https://phish.example/')).toBe(422);
    expect(await create('https://newly.example/')).toBe(201);
    writeFileSync(file, 'phish.example\n# reported today\nnewly.example\n');
    const seen = server.logs.length;
    server.child.kill('SIGHUP');
    await server.waitFor((e) => (server.logs.indexOf(e) >= seen && e.msg === 'blocked hosts read' ? e : undefined), 'read the list again');
    expect(await create('https://newly.example/')).toBe(422);
    expect(server.child.exitCode).toBeNull(); // still serving
  });

  it('when the file cannot be read at SIGHUP, then the list read before stays, the log says why, and a listed name still blocks its subdomains', async () => {
    writeFileSync(file, 'kept.example\n');
    const hup = async (msg: string) => {
      const seen = server.logs.length;
      server.child.kill('SIGHUP');
      return server.waitFor((e) => (server.logs.indexOf(e) >= seen && e.msg === msg ? e : undefined), msg);
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
});
