import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnEntry, type LoggedChild } from '../helpers/child-process.js';
import { startServer, TEST_PASSWORD_HASH_COST, type ServerProcess } from '../helpers/server-process.js';

const running: Array<ServerProcess | LoggedChild> = [];
afterEach(() => {
  for (const p of running.splice(0))
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
});

/** SPEC §17: one process per DATA_DIR, whatever CLICK_JOURNAL says; the refusal names the directory and the holder. */
describe('a second server process on the same DATA_DIR', () => {
  it.each(['false', 'true'])(
    'when CLICK_JOURNAL=%s and another process serves the directory, then the second refuses to start naming the directory and that process; once it is gone, the directory can be served again',
    { timeout: 120_000 },
    async (journal) => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-one-per-dir-'));
      const env = {
        DATA_DIR: dataDir,
        CLICK_JOURNAL: journal,
        JWT_SECRET: 'one-per-dir-secret-at-least-32-bytes-long',
      };
      try {
        const first = await startServer(env);
        running.push(first);
        const second = spawnEntry('src/server.ts', {
          HOST: '127.0.0.1',
          PORT: '0',
          PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
          ...env,
        });
        running.push(second);
        // Listening would be the failure; exiting before it (waitFor then rejects) the refusal.
        const listening = second
          .waitFor((e) => (/Server listening/.test(String(e.msg)) ? 'listening' : undefined), 'listen')
          .catch(() => 'exited');
        expect(await listening).toBe('exited');
        expect((await second.exited).code).toBe(1);
        expect(second.stderr()).toContain(`${dataDir} is in use by another Ferry process (pid ${first.child.pid})`);
        expect((await fetch(`${first.baseUrl}/healthz`)).status).toBe(200);

        first.child.kill('SIGKILL');
        await first.exited;
        const third = await startServer(env);
        running.push(third);
        expect((await fetch(`${third.baseUrl}/healthz`)).status).toBe(200);
      } finally {
        for (const p of running.splice(0)) {
          if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
          await p.exited;
        }
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
