import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, variables } from '../../src/config.js';
import { spawnEntry, type LoggedChild } from '../helpers/child-process.js';
import { ContractValidator, type OpenApiDoc } from '../helpers/contract.js';
import { runFerry } from '../helpers/cli.js';
import { TEST_PASSWORD_HASH_COST } from '../helpers/server-process.js';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  main: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
};

/** The fenced block of `doc` that holds `marker` (its first line names the file it stands for). */
function block(doc: string, marker: string): string {
  const found = [...read(doc).matchAll(/```\w*\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes(marker));
  if (!found) throw new Error(`${doc} has no block with ${marker}`);
  return found;
}

/** The `Key=value` lines of a systemd unit or an environment file (comments and sections left out), last one wins. */
function keyValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** What a compiled file under dist/ is built from (tsconfig.json: rootDir ".", outDir "dist"): dist/src/x.js → src/x.ts. */
const sourceOf = (built: string): string => built.replace(/^dist\//, '').replace(/\.js$/, '.ts');

const unit = keyValues(block('docs/proxies.md', '# /etc/systemd/system/ferry.service'));
const envFile = keyValues(block('docs/proxies.md', '# /etc/ferry/ferry.env'));
const backupUnit = keyValues(block('docs/backup.md', '# /etc/systemd/system/ferry-backup.service'));

/**
 * The systemd unit of docs/proxies.md (SPEC §18) and the backup unit of docs/backup.md, as printed: ExecStart
 * runs what package.json names, every variable they set is one of src/config.ts and is accepted there, and the
 * server started as the unit starts it answers with that configuration and stops cleanly on its KillSignal.
 */
describe('the systemd units in docs/', () => {
  it("when ExecStart is read, then it runs the compiled server that package.json's main and npm start run, with npm start's flags", () => {
    const [node, ...args] = unit.ExecStart!.split(/\s+/);
    const entry = args.at(-1);
    expect(node).toBe('/usr/bin/node');
    expect(entry).toBe(pkg.main);
    expect(pkg.scripts.start).toBe(`node ${args.join(' ')}`);
    expect(JSON.parse(read('tsconfig.json').replace(/^\s*\/\/.*$/gm, '')).compilerOptions).toMatchObject({
      rootDir: '.',
      outDir: 'dist',
    });
    expect(read(sourceOf(entry!))).toContain('buildApp');
    expect(unit.KillSignal).toBe('SIGTERM');
    // `systemctl reload`: SIGHUP to the main process, which is Node itself (issue 38: sent to npm, it never got there).
    expect(unit.ExecReload).toBe('/bin/kill -HUP $MAINPID');
  });

  it("when the environment file and the units are read, then each variable is one of the configuration's and its value is accepted", () => {
    expect(Object.keys(envFile).length).toBeGreaterThan(0);
    for (const name of Object.keys(envFile))
      expect(Object.keys(variables), `${name} in /etc/ferry/ferry.env`).toContain(name);
    for (const line of [unit.Environment, backupUnit.Environment].filter(Boolean)) {
      for (const name of line!.split(/\s+/).map((kv) => kv.replace(/^"/, '').split('=')[0]!))
        expect(Object.keys(variables)).toContain(name);
    }
    const config = loadConfig(envFile);
    // The unit lets the service write its DATA_DIR and waits longer than the drain on SIGTERM before killing it.
    expect(unit.ReadWritePaths!.split(/\s+/)).toContain(envFile.DATA_DIR);
    expect(Number(unit.TimeoutStopSec) * 1000).toBeGreaterThan(config.shutdownTimeoutMs);
    expect(backupUnit.EnvironmentFile).toBe(unit.EnvironmentFile);
    expect(backupUnit.WorkingDirectory).toBe(unit.WorkingDirectory);
  });

  it("when the backup unit's and the docs' CLI lines are read, then they run package.json's bin with commands it has", async () => {
    const backup = /^\/bin\/sh -c 'exec \/usr\/bin\/node (\S+) (backup) .+ (--force)'$/.exec(backupUnit.ExecStart!);
    expect(backup, backupUnit.ExecStart).not.toBeNull();
    expect(backup![1]).toBe(pkg.bin.ferry);
    const help = await runFerry(['backup', '--help'], {});
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('--force');
    const admin = /node (\S+) (admin create) \S+/.exec(block('docs/proxies.md', 'systemctl daemon-reload'));
    expect(admin![1]).toBe(pkg.bin.ferry);
    expect((await runFerry(['admin', 'create', '--help'], {})).status).toBe(0);
  });

  describe('ExecStart run as the unit runs it', () => {
    let dir: string;
    let server: LoggedChild;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'ferry-unit-'));
    });
    afterAll(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it("when started from its entry with the environment file (a data directory of its own, any free port), then it serves that configuration, ExecReload's signal reads the blocklist again, and SIGTERM ends it cleanly", async () => {
      const blocked = path.join(dir, 'blocked-hosts.txt');
      writeFileSync(blocked, 'phish.example\n');
      // The source of dist/src/server.js, compiled for this run (spawnEntry): the test needs no `npm run build`.
      const [, ...args] = unit.ExecStart!.split(/\s+/);
      server = spawnEntry(
        sourceOf(args.at(-1)!),
        {
          ...envFile,
          DATA_DIR: path.join(dir, 'data'),
          HOST: '127.0.0.1',
          PORT: '0',
          PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
          BLOCKED_HOSTS_FILE: blocked,
        },
        args.slice(0, -1),
      );
      const baseUrl = await server.waitFor(
        (e) => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(String(e.msg))?.[1],
        'listen',
      );
      const contract = new ContractValidator((await (await fetch(`${baseUrl}/v3/api-docs`)).json()) as OpenApiDoc);
      /** The answer's body, once checked against the document the server serves. */
      const checked = async (method: string, url: string, res: Response): Promise<Record<string, unknown>> => {
        const text = await res.text();
        expect(contract.check(method, url, res.status, res.headers.get('content-type') ?? undefined, text)).toEqual([]);
        return JSON.parse(text) as Record<string, unknown>;
      };
      const instance = await checked('GET', '/api/v1/instance', await fetch(`${baseUrl}/api/v1/instance`));
      expect(instance.registration).toBe(envFile.REGISTRATION);
      const link = await fetch(`${baseUrl}/api/v1/links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ original_url: 'https://example.com/' }),
      });
      expect(link.status).toBe(201);
      expect((await checked('POST', '/api/v1/links', link)).short_url).toMatch(
        new RegExp(`^${envFile.PUBLIC_BASE_URL}/`),
      );
      const seen = server.logs.length;
      server.child.kill(`SIG${/^\/bin\/kill -(\w+) \$MAINPID$/.exec(unit.ExecReload!)![1]!}` as NodeJS.Signals);
      const reread = (e: Record<string, unknown>) =>
        server.logs.indexOf(e) >= seen && e.msg === 'blocked hosts read' && e.by === 'SIGHUP';
      await server.waitFor((e) => (reread(e) ? e : undefined), 'read the blocklist again');
      expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
      server.child.kill(unit.KillSignal as NodeJS.Signals);
      await expect(server.exited).resolves.toMatchObject({ code: 0 });
    });
  });
});
