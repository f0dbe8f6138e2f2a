import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { compiledEntry } from '../helpers/child-process.js';
import { runFerry } from '../helpers/cli.js';
import { ContractValidator, type OpenApiDoc } from '../helpers/contract.js';
import { unless } from '../helpers/skip.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

const scriptMissing =
  spawnSync('script', ['--version']).status === 0 ? null : 'script(1) (util-linux) is not installed';

const ADMIN = { ADMIN_USERNAME: 'operator', ADMIN_PASSWORD: 'operator-password' };
/**
 * No limit of the server's gets in the way of the load below (bounded by its own count), nor its overload guard:
 * on a loaded 2-core machine a start-up's event-loop delay alone sheds requests (as in helpers/app.ts).
 */
const UNLIMITED = {
  RATE_LIMIT_PER_MINUTE: '1000000',
  REDIRECT_RATE_LIMIT_PER_MINUTE: '1000000',
  TOKEN_RATE_LIMIT_PER_MINUTE: '1000',
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
};
const MAX_VISITS = 20_000;

/** A real server process's HTTP API, every answer checked against the document it serves. */
async function client(server: ServerProcess) {
  const contract = new ContractValidator((await (await fetch(`${server.baseUrl}/v3/api-docs`)).json()) as OpenApiDoc);
  return async (method: string, url: string, opts: { token?: string; body?: unknown; expect?: number } = {}) => {
    const res = await fetch(`${server.baseUrl}${url}`, {
      method,
      redirect: 'manual',
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.body ? { 'content-type': 'application/json' } : {}),
      },
      ...(opts.body ? { body: JSON.stringify(opts.body) } : {}),
    });
    const text = await res.text();
    if (opts.expect !== undefined && res.status !== opts.expect)
      throw new Error(`${method} ${url} answered ${res.status}, not ${opts.expect}: ${text.slice(0, 300)}`);
    const problems = contract.check(method, url, res.status, res.headers.get('content-type') ?? undefined, text);
    if (problems.length) throw new Error(`${method} ${url} breaks the contract: ${problems.join('; ')}`);
    return {
      status: res.status,
      headers: res.headers,
      body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
    };
  };
}
type Api = Awaited<ReturnType<typeof client>>;

/** Visitors of one link and a writer of new links, until stopped (and never past MAX_VISITS). */
function startLoad(api: Api, code: string, key: string) {
  let stopped = false;
  const state = { visits: 0, created: [] as string[] };
  const visitor = async () => {
    while (!stopped && state.visits < MAX_VISITS) {
      const res = await api('GET', `/${code}`);
      if (res.status !== 302) throw new Error(`visit answered ${res.status}`);
      state.visits += 1;
    }
  };
  const writer = async () => {
    for (let n = 0; !stopped && n < MAX_VISITS; n += 1) {
      const res = await api('POST', '/api/v1/links', {
        token: key,
        body: { original_url: `https://example.com/during-backup/${n}` },
      });
      if (res.status !== 201) throw new Error(`link creation answered ${res.status}`);
      state.created.push(res.body.short_code as string);
    }
  };
  const runners = [visitor(), visitor(), visitor(), writer()];
  return {
    state,
    stop: async () => {
      stopped = true;
      await Promise.all(runners);
    },
  };
}

/** Resolves once `check` holds, asked again on each of the server's log lines (no fixed sleep). */
const serverSays = (server: ServerProcess, msg: RegExp) =>
  server.waitFor((e) => (msg.test(String(e.msg)) ? true : undefined), `log ${msg}`);

// Each test starts two server processes and runs several CLI commands: minutes on a loaded 2-core machine.
describe('ferry backup and restore (embedded database, real server processes)', { timeout: 240_000 }, () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const tempDir = (name: string): string => {
    const dir = mkdtempSync(path.join(tmpdir(), `ferry-${name}-`));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };
  const serve = async (env: Record<string, string>): Promise<ServerProcess> => {
    const server = await startServer({ ...UNLIMITED, ...env });
    cleanups.push(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    });
    return server;
  };

  it('when a backup is taken while the server answers visits and creates links, then a server restored from it has every link and click from before, once, and the old token and API key work', async () => {
    const original = tempDir('live');
    const server = await serve({ DATA_DIR: original, ...ADMIN });
    const api = await client(server);
    const token = (
      await api('POST', '/api/v1/tokens', {
        body: { username: ADMIN.ADMIN_USERNAME, password: ADMIN.ADMIN_PASSWORD },
        expect: 201,
      })
    ).body.accessToken as string;
    const me = (await api('GET', '/api/v1/users/me', { token, expect: 200 })).body.id as number;
    const key = (
      await api('POST', `/api/v1/users/${me}/api-keys`, {
        token,
        body: { name: 'load', scopes: ['links:read', 'links:write'] },
        expect: 201,
      })
    ).body.key as string;
    const link = (
      await api('POST', '/api/v1/links', { token, body: { original_url: 'https://example.com/counted' }, expect: 201 })
    ).body.short_code as string;

    const load = startLoad(api, link, key);
    await expect.poll(() => load.state.visits, { timeout: 60_000 }).toBeGreaterThanOrEqual(300);
    const before = { visits: load.state.visits, links: [...load.state.created] };
    const file = path.join(tempDir('file'), 'ferry.tar.gz');
    const backup = await runFerry(['backup', file, '--json'], { DATA_DIR: original });
    const after = load.state.visits;
    await load.stop();
    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.json().manifest).toMatchObject({ jwt_secret: 'file', database: { users: 1 } });
    expect(after).toBeGreaterThan(before.visits); // the server answered visits while the backup ran

    const restoredDir = path.join(tempDir('restored'), 'data');
    const restore = await runFerry(['restore', file], { DATA_DIR: restoredDir });
    expect(restore.status, restore.stderr).toBe(0);
    const restored = await serve({ DATA_DIR: restoredDir });
    if (backup.json().manifest.click_journal.segments > 0) await serverSays(restored, /^click journal replayed/);
    const api2 = await client(restored);

    const counted = (await api2('GET', `/api/v1/links/${link}`, { token, expect: 200 })).body.click_count as number;
    expect(counted).toBeGreaterThanOrEqual(before.visits);
    expect(counted).toBeLessThanOrEqual(after + 3); // at most the visits in flight when the backup ended
    for (const code of before.links)
      expect((await api2('GET', `/api/v1/links/${code}`, { token: key })).status, code).toBe(200);
    const visit = await api2('GET', `/${before.links[0] ?? link}`);
    expect(visit.status).toBe(302);
    expect(visit.headers.get('location')).toMatch(/^https:\/\/example\.com\//);
  });

  it('when the server has not written its clicks yet, then they come back from the journal; a non-empty or damaged target is refused', async () => {
    const original = tempDir('unflushed');
    // Clicks wait a minute before they are written: at the backup they are only in the journal.
    const server = await serve({ DATA_DIR: original, CLICK_FLUSH_MS: '60000', ...ADMIN });
    const api = await client(server);
    const token = (
      await api('POST', '/api/v1/tokens', {
        body: { username: ADMIN.ADMIN_USERNAME, password: ADMIN.ADMIN_PASSWORD },
        expect: 201,
      })
    ).body.accessToken as string;
    const link = (
      await api('POST', '/api/v1/links', {
        token,
        body: { original_url: 'https://example.com/journal-only' },
        expect: 201,
      })
    ).body.short_code as string;
    for (let i = 0; i < 100; i += 1) expect((await api('GET', `/${link}`)).status).toBe(302);

    const file = path.join(tempDir('file'), 'ferry.tar.gz');
    const backup = await runFerry(['backup', file, '--json'], { DATA_DIR: original });
    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.json().manifest.database.clicks).toBe(0);
    expect(backup.json().manifest.click_journal.segments).toBeGreaterThan(0);

    const refused = await runFerry(['restore', file], { DATA_DIR: original });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/not empty/);
    const damaged = path.join(path.dirname(file), 'damaged.tar.gz');
    const bytes = readFileSync(file);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    writeFileSync(damaged, bytes);
    const target = path.join(tempDir('restored'), 'data');
    const broken = await runFerry(['restore', damaged], { DATA_DIR: target });
    expect(broken.status).toBe(1);
    expect(broken.stderr).toMatch(/not a usable Ferry backup/);

    const restore = await runFerry(['restore', file], { DATA_DIR: target });
    expect(restore.status, restore.stderr).toBe(0);
    const restored = await serve({ DATA_DIR: target });
    await serverSays(restored, /^click journal replayed/);
    const api2 = await client(restored);
    expect((await api2('GET', `/api/v1/links/${link}`, { token, expect: 200 })).body.click_count).toBe(100);
  });

  it.skipIf(scriptMissing)(
    unless(
      scriptMissing,
      'when a backup runs at a terminal, then it draws a progress bar; with --json or through a pipe, then it does not',
    ),
    async () => {
      const dataDir = tempDir('tty');
      expect((await runFerry(['migrate'], { DATA_DIR: dataDir })).status).toBe(0);
      const atTerminal = (args: string) =>
        new Promise<string>((resolve, reject) => {
          // script(1) gives the command a pseudo-terminal as stdin, stdout and stderr, and copies what it shows.
          const child = spawn(
            'script',
            ['-qec', `${process.execPath} ${compiledEntry('src/cli/ferry.ts')} ${args}`, '/dev/null'],
            {
              cwd: path.resolve(import.meta.dirname, '../..'),
              env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, TERM: 'xterm' },
              stdio: ['ignore', 'pipe', 'pipe'],
            },
          );
          let shown = '';
          child.stdout.on('data', (c: Buffer) => (shown += c.toString()));
          child.on('error', reject);
          child.on('close', (code) => (code === 0 ? resolve(shown) : reject(new Error(`exit ${code}: ${shown}`))));
        });
      const dir = tempDir('tty-file');
      expect(await atTerminal(`backup ${dir}/a.tar.gz`)).toMatch(/backup \[[█░]+\] 100%/);
      const json = await atTerminal(`backup ${dir}/b.tar.gz --json`);
      expect(json).not.toMatch(/[█░]/);
      expect(JSON.parse(json).manifest.format).toBe('ferry-backup');
      const piped = await runFerry(['backup', `${dir}/c.tar.gz`], { DATA_DIR: dataDir });
      expect(piped.stdout + piped.stderr).not.toMatch(/[█░]/);
    },
  );

  it('when DATABASE_URL is set, then backup and restore point to pg_dump and pg_restore and exit 2', async () => {
    for (const command of ['backup', 'restore']) {
      let stderr = '';
      const status = await runCli({
        argv: [command, '/tmp/never-written.tar.gz'],
        env: { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
        stdout: { write: () => true },
        stderr: { write: (s: string) => ((stderr += s), true) },
        stdin: process.stdin,
      });
      expect(status).toBe(2);
      expect(stderr).toMatch(command === 'backup' ? /pg_dump/ : /pg_restore/);
      expect(stderr).toMatch(/JWT_SECRET/);
    }
  });
});
