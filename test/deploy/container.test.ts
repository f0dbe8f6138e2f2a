import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ContractValidator, type OpenApiDoc } from '../helpers/contract.js';
import { freePort } from '../helpers/scale-out.js';
import { unless } from '../helpers/skip.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PODMAN = path.join(ROOT, 'scripts/container/podman.sh');
const noPodman =
  process.env.TEST_PODMAN === 'off'
    ? 'TEST_PODMAN=off (.ci/run builds the image once, in the Node 20 run: it does not depend on the Node that runs the tests)'
    : spawnSync('podman', ['--version']).error
      ? 'podman is not installed (apt-get install podman runc; .ci/run does)'
      : null;
/** The host's CA bundle, for npm inside the build where TLS is inspected on the way out (this project's CI). */
const HOST_CA = '/etc/ssl/certs/ca-certificates.crt';

/** Runs scripts/container/podman.sh (runc, the store under /var/tmp/ferry-ci) and resolves with its output; rejects on failure. */
function podman(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(PODMAN, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.stdin.end(input ?? '');
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out.trim())
        : reject(new Error(`podman ${args.slice(0, 3).join(' ')} exited ${code}: ${err.slice(-2000)}`)),
    );
  });
}

function script(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(ROOT, file), [], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) =>
      code === 0 ? resolve(out.trim().split('\n').pop()!) : reject(new Error(`${file} exited ${code}: ${err}`)),
    );
  });
}

/** Resolves once the container's server answers /healthz (each try is a connection, no fixed sleep between). */
async function healthy(baseUrl: string, container: string): Promise<void> {
  for (let tries = 0; ; tries += 1) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    const state = await podman(['inspect', '--format', '{{.State.Status}}', container]);
    if (state !== 'running')
      throw new Error(`the container is ${state}: ${await podman(['logs', container]).catch(() => '')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the container image (Containerfile), built and run with podman', () => {
  const name = `ferry-test-${randomBytes(4).toString('hex')}`;
  const volume = `${name}-data`;
  const image = `localhost/ferry:${name}`;
  afterAll(async () => {
    if (noPodman) return;
    await podman(['rm', '-f', '--time', '0', name]).catch(() => undefined);
    await podman(['volume', 'rm', '-f', volume]).catch(() => undefined);
    await podman(['rmi', image]).catch(() => undefined);
  });

  it.skipIf(noPodman)(
    unless(
      noPodman,
      'when the image runs on a volume, then /healthz answers, the CLI works inside, and a link survives a restart and redirects',
    ),
    { timeout: 1_200_000 },
    async () => {
      // No registry here: the base is a local stand-in of node:22-bookworm-slim (cached under /var/tmp/ferry-ci).
      const base = process.env.FERRY_TEST_NODE_IMAGE ?? (await script('scripts/container/local-base.sh'));
      const ca = existsSync(HOST_CA)
        ? [
            '-v',
            `${path.dirname(HOST_CA)}:/etc/host-certs:ro`,
            '--build-arg',
            'NPM_CONFIG_CAFILE=/etc/host-certs/ca-certificates.crt',
            '--build-arg',
            'NODE_EXTRA_CA_CERTS=/etc/host-certs/ca-certificates.crt',
          ]
        : [];
      const started = performance.now();
      await podman([
        'build',
        '--format',
        'docker',
        '--network',
        'host',
        ...ca,
        '--build-arg',
        `NODE_IMAGE=${base}`,
        '-t',
        image,
        '.',
      ]);
      const size = Number(await podman(['image', 'inspect', '--format', '{{.Size}}', image]));
      process.stdout.write(
        `container: ${image} built in ${Math.round((performance.now() - started) / 1000)} s, ${Math.round(size / 1e6)} MB\n`,
      );

      const port = await freePort();
      const baseUrl = `http://127.0.0.1:${port}`;
      const run = [
        'run',
        '-d',
        '--name',
        name,
        '--init',
        '--network',
        'host',
        '-e',
        'HOST=127.0.0.1',
        '-e',
        `PORT=${port}`,
        '-e',
        `PUBLIC_BASE_URL=${baseUrl}`,
        '-v',
        `${volume}:/data:U`,
        image,
      ];
      await podman(run);
      await healthy(baseUrl, name);
      await podman(['healthcheck', 'run', name]); // the image's HEALTHCHECK (kept by --format docker) passes
      // Production: no dev dependencies, no sources, no compiler; a user without privileges.
      await podman([
        'exec',
        name,
        'sh',
        '-c',
        'test ! -e node_modules/typescript && test ! -e node_modules/vite && test ! -e src && ! command -v cc && ! command -v gcc && ! command -v make && test "$(id -u)" != 0',
      ]);

      // The first-run hint is a command that runs in the container as printed (its <username> filled in).
      const hint = ((await (await fetch(`${baseUrl}/api/v1/instance`)).json()) as { first_admin_command: string })
        .first_admin_command;
      expect(hint).toBe('ferry admin create <username>');
      expect(await podman(['logs', name])).toContain(
        'create the first one on this machine with `ferry admin create <username>`',
      );
      await podman(['exec', '-i', name, ...hint.replace('<username>', 'boss').split(' ')], 'container-password\n');
      const contract = new ContractValidator((await (await fetch(`${baseUrl}/v3/api-docs`)).json()) as OpenApiDoc);
      const call = async (method: string, url: string, opts: { token?: string; body?: unknown } = {}) => {
        const res = await fetch(`${baseUrl}${url}`, {
          method,
          redirect: 'manual',
          headers: {
            ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
            ...(opts.body ? { 'content-type': 'application/json' } : {}),
          },
          ...(opts.body ? { body: JSON.stringify(opts.body) } : {}),
        });
        const text = await res.text();
        expect(contract.check(method, url, res.status, res.headers.get('content-type') ?? undefined, text)).toEqual([]);
        return {
          status: res.status,
          location: res.headers.get('location'),
          body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
        };
      };
      const token = (
        await call('POST', '/api/v1/tokens', { body: { username: 'boss', password: 'container-password' } })
      ).body.accessToken as string;
      const created = await call('POST', '/api/v1/links', {
        token,
        body: { original_url: 'https://example.com/kept', short_code: 'kept' },
      });
      expect(created.status).toBe(201);

      await podman(['stop', '--time', '30', name]);
      await podman(['start', name]);
      await healthy(baseUrl, name);
      expect((await call('GET', '/api/v1/links/kept', { token })).status).toBe(200);
      const visit = await call('GET', '/kept');
      expect(visit.status).toBe(302);
      expect(visit.location).toBe('https://example.com/kept');
    },
  );
});
