import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../../helpers/app.js';
import { freePort } from '../../helpers/scale-out.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

async function waitUntilUp(base: string, child: ReturnType<typeof spawn>): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/v3/api-docs`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}

describe.each(engines)('SIGTERM on %s', (engine) => {
  it('when the server gets SIGTERM right after the visits, then every click is written before it exits', async () => {
    // A fresh database (and data directory) prepared by the test helper; the real server process uses it.
    const t = await createTestApp(engine);
    await t.app.close();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: t.config.dataDir,
        JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long!',
        LOG_LEVEL: 'warn',
        // Nothing is written before the signal: only the shutdown flush can save these clicks.
        CLICK_FLUSH_MS: '60000',
        CLICK_BATCH_SIZE: '100000',
        ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    try {
      await waitUntilUp(base, child);
      const created = await fetch(`${base}/api/v1/links`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ original_url: 'https://example.com/t' }) });
      const link = (await created.json()) as { id: number; short_code: string };
      const visits = 200;
      const responses = await Promise.all([
        ...Array.from({ length: visits }, () => fetch(`${base}/${link.short_code}`, { redirect: 'manual' })),
        ...Array.from({ length: 50 }, () => fetch(`${base}/${link.short_code}`, { method: 'HEAD', redirect: 'manual' })),
      ]);
      expect(responses.every((r) => r.status === 302)).toBe(true);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code, output).toBe(0);
      const count = await t.storage.db.selectFrom('clicks').select((eb) => eb.fn.countAll<number>().as('n')).where('link_id', '=', link.id).executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(visits);
      const row = await t.storage.db.selectFrom('links').select('click_count').where('id', '=', link.id).executeTakeFirstOrThrow();
      expect(Number(row.click_count)).toBe(visits);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await t.close();
    }
  }, 60_000);
});
