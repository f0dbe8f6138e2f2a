import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../../helpers/app.js';
import { startServer } from '../../helpers/server-process.js';
import { startSourceStub } from '../../helpers/source-stub.js';
import { SHLINK_API_KEY, shlinkPage, shlinkVisitsPage } from './fixtures/shlink.js';

const SHUTDOWN_TIMEOUT_MS = 5_000;

/**
 * SPEC §25: SIGTERM during an import ends the process cleanly within SHUTDOWN_TIMEOUT_MS — even while the import
 * waits on a source that never answers — and the job is left `interrupted`, saying how to go on, never `running`.
 */
describe.each(engines)('SIGTERM during an import on %s', (engine) => {
  it(
    'when the server gets SIGTERM while an import waits on its source, then it exits 0 in time and the job says interrupted',
    { timeout: 180_000 },
    async () => {
      const t = await createTestApp(engine);
      await t.app.close();
      let reached!: () => void;
      const waiting = new Promise<void>((r) => (reached = r));
      const visits = Array.from({ length: 1_500 }, (_, i) => ({
        referer: null,
        date: new Date(Date.UTC(2022, 0, 1) + i * 1000).toISOString(),
        userAgent: 'Mozilla/5.0',
        visitLocation: null,
        potentialBot: false,
      }));
      const never = new Promise<never>(() => undefined);
      const stub = await startSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, (path, q) => {
        if (path === '/rest/v3/short-urls') {
          const link = {
            shortCode: 'term1',
            longUrl: 'https://example.com/term',
            dateCreated: '2022-01-01T00:00:00+00:00',
            tags: [],
            meta: {},
            domain: null,
            title: null,
          };
          return shlinkPage('shortUrls', [link], 1, 10);
        }
        // Page 2 of the visits (the oldest, read right after page 1 told how many pages there are) never comes.
        if (path.endsWith('/visits') && q.get('page') === '2') {
          reached();
          return never;
        }
        return shlinkVisitsPage(visits, q);
      });
      const server = await startServer({
        DATA_DIR: t.config.dataDir,
        JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long!',
        ADMIN_USERNAME: 'imp-admin',
        ADMIN_PASSWORD: 'correct-horse-battery',
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
      });
      try {
        const tokenRes = await fetch(`${server.baseUrl}/api/v1/tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'imp-admin', password: 'correct-horse-battery' }),
        });
        const token = ((await tokenRes.json()) as { accessToken: string }).accessToken;
        const started = await fetch(`${server.baseUrl}/api/v1/imports`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ source: 'shlink', url: stub.url, api_key: SHLINK_API_KEY }),
        });
        expect(started.status).toBe(202);
        const { id } = (await started.json()) as { id: number };
        await waiting;
        const signalled = Date.now();
        server.child.kill('SIGTERM');
        const exit = await server.exited;
        expect(exit.code, server.stderr()).toBe(0);
        expect(exit.at - signalled).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 2_000);
        expect(server.stderr()).not.toMatch(/FATAL|Error/);
        const job = await t.storage.db
          .selectFrom('import_jobs')
          .select(['state', 'error'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        expect(job).toMatchObject({
          state: 'interrupted',
          error: expect.stringMatching(/start the same import again/),
        });
      } finally {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
        await stub.close().catch(() => undefined);
        await t.close();
      }
    },
  );
});
