import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoad } from '../helpers/load.js';
import { waitFor } from '../helpers/scale-out.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { unless } from '../helpers/skip.js';
import { mountTmpfs, tmpfsMissing } from '../helpers/tmpfs.js';

/**
 * SPEC §17, "Storage full or read-only", on the embedded engine: DATA_DIR on a small tmpfs of the test's own,
 * filled to ENOSPC while a real server runs. Writes answer 503 STORAGE_UNAVAILABLE with Retry-After,
 * /readyz fails naming the storage, reads and redirects keep working, and once space returns everything is
 * as before, nothing answered 500, the process never stopped, and every redirect answered (during the full
 * disk too) is one click written.
 */
const NO_TMPFS = tmpfsMissing();
const ADMIN = { username: 'full_admin', password: 'full-admin-password-1' };
const HUMAN = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
};

const servers: ServerProcess[] = [];
afterEach(() => {
  for (const s of servers.splice(0))
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
});

describe.skipIf(NO_TMPFS !== null)(unless(NO_TMPFS, 'when DATA_DIR is on a disk that fills up'), () => {
  it(
    'then writes are 503 STORAGE_UNAVAILABLE with Retry-After, /readyz names the storage, redirects and reads go on, and all of it recovers once space returns',
    { timeout: 180_000 },
    async () => {
      const disk = mountTmpfs(48);
      try {
        const server = await startServer({
          DATA_DIR: path.join(disk.dir, 'data'),
          JWT_SECRET: 'storage-full-secret-at-least-32-bytes-long',
          ADMIN_USERNAME: ADMIN.username,
          ADMIN_PASSWORD: ADMIN.password,
          RATE_LIMIT_PER_MINUTE: '1000000',
          REDIRECT_RATE_LIMIT_PER_MINUTE: '1000000',
          OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
        });
        servers.push(server);
        const base = server.baseUrl;
        const post = (p: string, body: unknown, token?: string) =>
          fetch(`${base}${p}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
            body: JSON.stringify(body),
          });
        const token = ((await (await post('/api/v1/tokens', ADMIN)).json()) as { accessToken: string }).accessToken;
        const code = (
          (await (await post('/api/v1/links', { original_url: 'https://example.com/full-disk' }, token)).json()) as {
            short_code: string;
          }
        ).short_code;
        const signUp = (n: string) =>
          post('/api/v1/users', { username: `full_${n}`, email: `full_${n}@example.com`, password: 'long-enough-pw' });
        const readiness = async () => {
          const res = await fetch(`${base}/readyz`);
          return {
            status: res.status,
            failing:
              res.status === 200
                ? []
                : ((await res.json()) as { error: { details: Array<{ field: string }> } }).error.details.map(
                    (d) => d.field,
                  ),
          };
        };
        // Redirects, reads and writes all along: none may be answered 500 or without Retry-After.
        const load = startLoad(
          base,
          [
            () => ({ path: `/${code}`, headers: HUMAN }),
            () => ({ path: `/api/v1/links/${code}`, token }),
            (n) => ({
              method: 'POST',
              path: '/api/v1/links',
              token,
              body: { original_url: `https://example.com/${'x'.repeat(1000)}/${n}` },
            }),
          ],
          4,
        );
        await waitFor('the load to get going', async () => load.tally.total >= 60, 30_000);
        expect((await signUp('before')).status).toBe(201);

        const filler = disk.fill();
        const redirectsBefore = load.count(302);
        await waitFor(
          'a write to meet the full disk',
          async () => (load.tally.codes.STORAGE_UNAVAILABLE ?? 0) >= 5,
          60_000,
        );
        // A write that fits in space the database already holds (free pages, a WAL restarted after a checkpoint) can
        // still succeed on the full disk: the next sign-up that needs more is the one refused. None may be a 500.
        let refused = await signUp('during0');
        for (let i = 1; refused.status === 201 && i < 50; i += 1) refused = await signUp(`during${i}`);
        expect(refused.status).toBe(503);
        expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('STORAGE_UNAVAILABLE');
        await waitFor(
          '/readyz to name the storage',
          async () => (await readiness()).failing.includes('storage'),
          15_000,
        );
        // The journal cannot write: the clicks are held in memory, /readyz and /metrics say so.
        await waitFor(
          '/readyz to say click_journal: degraded',
          async () => (await readiness()).failing.includes('click_journal'),
          15_000,
        );
        const metric = async (name: string) =>
          Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${base}/metrics`)).text())?.[1] ?? NaN);
        expect(await metric('ferry_click_journal_degraded')).toBe(1);
        expect(await metric('ferry_clicks_unjournaled_total')).toBeGreaterThan(0);
        await waitFor(
          'redirects to go on while the disk is full',
          async () => load.count(302) >= redirectsBefore + 100,
          30_000,
        );
        const reads = await fetch(`${base}/api/v1/links/${code}`, { headers: { authorization: `Bearer ${token}` } });
        expect(reads.status).toBe(200);

        filler.free();
        const freed = Date.now();
        await waitFor('/readyz to be ready again', async () => (await readiness()).status === 200, 30_000);
        const readyAfterMs = Date.now() - freed;
        expect((await signUp('after')).status).toBe(201);
        const created = load.count(201);
        await waitFor('writes to succeed again', async () => load.count(201) >= created + 10, 30_000);
        const tally = await load.stop();
        // Every redirect answered, during the full disk too, is a click written once (none lost, none twice).
        const clicks = async () =>
          (
            (await (
              await fetch(`${base}/api/v1/links/${code}`, { headers: { authorization: `Bearer ${token}` } })
            ).json()) as { click_count: number }
          ).click_count;
        await waitFor('every answered redirect to be written', async () => (await clicks()) >= load.count(302), 60_000);
        const written = await clicks();
        console.log(
          `Full disk: ${tally.total} answers ${JSON.stringify(tally.statuses)}, 503 codes ${JSON.stringify(tally.codes)}, /readyz ready ${readyAfterMs} ms after space returned, ${written} clicks written for ${load.count(302)} redirects answered`,
        );
        expect(written).toBe(load.count(302));
        expect(server.child.exitCode).toBeNull();
        expect(tally.bad).toEqual([]);
        expect(tally.unanswered).toEqual([]);
      } finally {
        for (const s of servers.splice(0)) {
          s.child.kill('SIGKILL');
          await s.exited;
        }
        disk.unmount();
      }
    },
  );

  it(
    'then the clicks held while the journal could not write are journaled by its next write, so a kill right after loses none of them',
    { timeout: 120_000 },
    async () => {
      const HELD = 25;
      const disk = mountTmpfs(48);
      try {
        // Nothing reaches the database before the kill: every click after the restart comes from the journal.
        const env = {
          DATA_DIR: path.join(disk.dir, 'data'),
          JWT_SECRET: 'storage-full-secret-at-least-32-bytes-long',
          CLICK_FLUSH_MS: '60000',
          CLICK_BATCH_SIZE: '100000',
          RATE_LIMIT_PER_MINUTE: '1000000',
          REDIRECT_RATE_LIMIT_PER_MINUTE: '1000000',
          OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
        };
        let server = await startServer(env);
        servers.push(server);
        const created = await fetch(`${server.baseUrl}/api/v1/links`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ original_url: 'https://example.com/held' }),
        });
        expect(created.status).toBe(201);
        const { short_code: code } = (await created.json()) as { short_code: string };
        const visit = async (s: ServerProcess) =>
          (await fetch(`${s.baseUrl}/${code}`, { redirect: 'manual', headers: HUMAN })).status;
        const journalDegraded = async (s: ServerProcess) => {
          const res = await fetch(`${s.baseUrl}/readyz`);
          return (
            res.status !== 200 &&
            ((await res.json()) as { error: { details: Array<{ field: string }> } }).error.details.some(
              (d) => d.field === 'click_journal',
            )
          );
        };

        const filler = disk.fill();
        for (let i = 0; i < HELD; i += 1) expect(await visit(server)).toBe(302);
        expect(await journalDegraded(server)).toBe(true);
        filler.free();
        expect(await visit(server)).toBe(302);
        await waitFor('the journal to write again', async () => !(await journalDegraded(server)), 15_000);
        server.child.kill('SIGKILL');
        await server.exited;

        server = await startServer(env);
        servers.push(server);
        const clicks = async () =>
          ((await (await fetch(`${server.baseUrl}/api/v1/links/${code}`)).json()) as { click_count: number })
            .click_count;
        await waitFor('the replay to write every answered redirect', async () => (await clicks()) >= HELD + 1, 30_000);
        expect(await clicks()).toBe(HELD + 1);
      } finally {
        for (const s of servers.splice(0)) {
          s.child.kill('SIGKILL');
          await s.exited;
        }
        disk.unmount();
      }
    },
  );
});
