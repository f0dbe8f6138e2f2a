import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../../helpers/app.js';
import { startServer } from '../../helpers/server-process.js';

describe.each(engines)('SIGTERM on %s', (engine) => {
  it(
    'when the server gets SIGTERM right after the visits, then every click is written before it exits',
    { timeout: 180_000 },
    async () => {
      // A fresh database (and data directory) prepared by the test helper; the real server process uses it.
      const t = await createTestApp(engine);
      await t.app.close();
      // Started and watched through its log (listening, exit): no polling with sleeps on a busy machine.
      const server = await startServer({
        DATA_DIR: t.config.dataDir,
        JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long!',
        // Nothing is written before the signal: only the shutdown flush can save these clicks.
        CLICK_FLUSH_MS: '60000',
        CLICK_BATCH_SIZE: '100000',
        // 250 visits at once from one address, on a machine that may be busy: neither the redirect limit nor
        // overload shedding is what this test is about (a 503 from shedding failed it under load, issue 26).
        REDIRECT_RATE_LIMIT_PER_MINUTE: '1000000',
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
        ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
      });
      const base = server.baseUrl;
      try {
        const created = await fetch(`${base}/api/v1/links`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ original_url: 'https://example.com/t' }),
        });
        const link = (await created.json()) as { id: number; short_code: string };
        const visits = 200;
        const responses = await Promise.all([
          ...Array.from({ length: visits }, () => fetch(`${base}/${link.short_code}`, { redirect: 'manual' })),
          ...Array.from({ length: 50 }, () =>
            fetch(`${base}/${link.short_code}`, { method: 'HEAD', redirect: 'manual' }),
          ),
        ]);
        expect(responses.map((r) => r.status).filter((s) => s !== 302)).toEqual([]);
        server.child.kill('SIGTERM');
        const exit = await server.exited;
        expect(exit.code, server.stderr()).toBe(0);
        const count = await t.storage.db
          .selectFrom('clicks')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('link_id', '=', link.id)
          .executeTakeFirstOrThrow();
        expect(Number(count.n)).toBe(visits);
        const row = await t.storage.db
          .selectFrom('links')
          .select('click_count')
          .where('id', '=', link.id)
          .executeTakeFirstOrThrow();
        expect(Number(row.click_count)).toBe(visits);
      } finally {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
        await t.close();
      }
    },
  );
});
