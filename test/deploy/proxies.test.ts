import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createStorage } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { ContractValidator, type OpenApiDoc } from '../helpers/contract.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { freePort } from '../helpers/scale-out.js';
import { unless } from '../helpers/skip.js';

const installed = (tool: string): string | null =>
  spawnSync(tool, ['-v']).error
    ? `${tool} is not installed (apt-get install ${tool === 'nginx' ? 'nginx-light' : tool})`
    : null;
const noCaddy = installed('caddy');
const noNginx = installed('nginx');

/** The example of docs/proxies.md in a ```lang block: what is tested is what the docs print. */
const example = (lang: string): string => {
  const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/proxies.md'), 'utf8');
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(doc)?.[1];
  if (!block) throw new Error(`docs/proxies.md has no ${lang} example`);
  return block;
};

/** A verified domain in Ferry's database before it starts (what the TLS `ask` answers 200 for). */
const VERIFIED = { hostname: 'verified.example.test', token: 'proxiesTestToken1' };

async function seedVerifiedDomain(dataDir: string): Promise<void> {
  const storage = createStorage(
    loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long!' }),
  );
  try {
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
    const now = Date.now();
    await sql`insert into domains (hostname, token, verified_at, created_at, updated_at) values (${VERIFIED.hostname}, ${VERIFIED.token}, ${now}, ${now}, ${now})`.execute(
      storage.db,
    );
  } finally {
    await storage.close();
  }
}

/**
 * The Caddy example as a test runs it: loopback ports instead of 80, 443 and the name's site, and Caddy's own CA
 * instead of ACME (`tls internal`), so that on-demand certificates are issued without the internet — still only
 * when the `ask` endpoint says so.
 */
function caddyfileForTest(home: string, ports: { site: number; http: number; https: number; ferry: string }): string {
  return example('caddy')
    .replace(
      '{\n',
      `{\n\tadmin off\n\tstorage file_system ${home}\n\tskip_install_trust\n\thttp_port ${ports.http}\n\thttps_port ${ports.https}\n`,
    )
    .replaceAll('127.0.0.1:3000', `127.0.0.1:${ports.ferry}`)
    .replace('go.example.com {', `http://127.0.0.1:${ports.site} {\n\tbind 127.0.0.1`)
    .replace('https:// {', 'https:// {\n\tbind 127.0.0.1')
    .replace('http:// {', 'http:// {\n\tbind 127.0.0.1')
    .replace('tls {\n\t\ton_demand', 'tls internal {\n\t\ton_demand');
}

/** The certificate Caddy presents for `servername` on `port`, or the handshake's failure. */
function certificateFor(port: number, servername: string): Promise<{ altNames: string } | { error: string }> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      resolve({ altNames: socket.getPeerCertificate().subjectaltname ?? '' });
      socket.destroy();
    });
    socket.on('error', (err) => resolve({ error: err.message }));
  });
}

/** Resolves once something accepts connections on the port (the proxy is up), rejecting if `child` exits first. */
async function accepting(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}: ${output()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(socket.destroy() !== null));
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 50)); // the next connection attempt, not a wait for time to pass
  }
}

/**
 * A request from 127.0.0.2 (another loopback address than the proxy's own) through the proxy, carrying a forged
 * X-Forwarded-For; resolves with what Ferry logged as the client's address for it.
 */
async function addressSeenThrough(
  ferry: ServerProcess,
  contract: ContractValidator,
  opts: { port: number; tls: boolean; host: string },
): Promise<string> {
  const requestId = randomUUID();
  const status = await new Promise<number>((resolve, reject) => {
    const req = (opts.tls ? https : http).request(
      {
        host: '127.0.0.1',
        port: opts.port,
        path: '/api/v1/instance',
        localAddress: '127.0.0.2',
        rejectUnauthorized: false,
        servername: opts.host,
        headers: { host: opts.host, 'x-request-id': requestId, 'x-forwarded-for': '203.0.113.9' },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          const problems = contract.check(
            'GET',
            '/api/v1/instance',
            res.statusCode!,
            res.headers['content-type'],
            body,
          );
          if (problems.length) reject(new Error(problems.join('; ')));
          else resolve(res.statusCode!);
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
  expect(status).toBe(200);
  return ferry.waitFor(
    (e) => (e.requestId === requestId && (e.req as { remoteAddress?: string } | undefined)?.remoteAddress) || undefined,
    `log request ${requestId}`,
  );
}

describe('the proxy examples of docs/proxies.md in front of a Ferry process (TRUST_PROXY=127.0.0.1)', () => {
  let ferry: ServerProcess;
  let contract: ContractValidator;
  let dir: string;
  let ferryPort: string;
  const proxies: ChildProcess[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-proxies-'));
    if (noCaddy && noNginx) return;
    await seedVerifiedDomain(path.join(dir, 'data'));
    ferry = await startServer({
      DATA_DIR: path.join(dir, 'data'),
      TRUST_PROXY: '127.0.0.1',
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    });
    ferryPort = new URL(ferry.baseUrl).port;
    contract = new ContractValidator((await (await fetch(`${ferry.baseUrl}/v3/api-docs`)).json()) as OpenApiDoc);
  });
  afterAll(async () => {
    for (const p of proxies) p.kill('SIGTERM');
    if (ferry) {
      ferry.child.kill('SIGTERM');
      await ferry.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (command: string, args: string[], env: Record<string, string> = {}) => {
    let output = '';
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    proxies.push(child);
    return { child, output: () => output };
  };

  it.skipIf(noCaddy)(
    unless(
      noCaddy,
      "when Caddy forwards a request, then Ferry sees the client's address, not the proxy's nor a forged one; on-demand TLS asks Ferry which names get a certificate",
    ),
    async () => {
      const home = path.join(dir, 'caddy');
      mkdirSync(home);
      const env = { HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home };
      // As printed, the example is a valid Caddyfile.
      writeFileSync(path.join(home, 'Caddyfile.printed'), example('caddy'));
      const valid = spawnSync(
        'caddy',
        ['validate', '--config', path.join(home, 'Caddyfile.printed'), '--adapter', 'caddyfile'],
        { env: { PATH: process.env.PATH ?? '', ...env } },
      );
      expect(valid.status, String(valid.stderr)).toBe(0);

      const ports = { site: await freePort(), http: await freePort(), https: await freePort(), ferry: ferryPort };
      writeFileSync(path.join(home, 'Caddyfile'), caddyfileForTest(home, ports));
      const caddy = run('caddy', ['run', '--config', path.join(home, 'Caddyfile'), '--adapter', 'caddyfile'], env);
      await accepting(ports.site, caddy.child, caddy.output);
      await accepting(ports.https, caddy.child, caddy.output);
      expect(
        await addressSeenThrough(ferry, contract, { port: ports.site, tls: false, host: `127.0.0.1:${ports.site}` }),
      ).toBe('127.0.0.2');

      // On-demand TLS asks Ferry (GET /internal/tls/allowed): a verified domain gets a certificate, another name none.
      expect(await certificateFor(ports.https, VERIFIED.hostname)).toEqual({ altNames: `DNS:${VERIFIED.hostname}` });
      expect(await certificateFor(ports.https, 'unknown.example.test')).toHaveProperty('error');
      // Port 80's site passes the HTTP proof through to Ferry, which answers the domain's token.
      const proof = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get(
            {
              host: '127.0.0.1',
              port: ports.http,
              path: `/.well-known/ferry-verification/${VERIFIED.token}`,
              headers: { host: VERIFIED.hostname },
            },
            (res) => {
              let body = '';
              res.on('data', (c: Buffer) => (body += c.toString()));
              res.on('end', () => resolve({ status: res.statusCode!, body }));
            },
          )
          .on('error', reject);
      });
      expect(proof).toEqual({ status: 200, body: VERIFIED.token });
    },
  );

  it.skipIf(noNginx)(
    unless(
      noNginx,
      "when nginx forwards an HTTPS request, then Ferry sees the client's address, not the proxy's nor a forged one",
    ),
    async () => {
      const port = await freePort();
      const home = path.join(dir, 'nginx');
      mkdirSync(home);
      const made = spawnSync('openssl', [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=go.example.com',
        '-keyout',
        path.join(home, 'key.pem'),
        '-out',
        path.join(home, 'cert.pem'),
      ]);
      expect(made.status, String(made.stderr)).toBe(0);
      const server = example('nginx')
        .split('\n\nserver {')[0]!
        .replace('listen 443 ssl http2;', `listen 127.0.0.1:${port} ssl http2;`)
        .replace(/^\s*listen \[::\]:443 ssl http2;\n/m, '')
        .replace('/etc/letsencrypt/live/go.example.com/fullchain.pem', path.join(home, 'cert.pem'))
        .replace('/etc/letsencrypt/live/go.example.com/privkey.pem', path.join(home, 'key.pem'))
        .replace('http://127.0.0.1:3000', `http://127.0.0.1:${ferryPort}`);
      const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
        .map((t) => `${t}_temp_path ${home}/${t};`)
        .join(' ');
      writeFileSync(
        path.join(home, 'nginx.conf'),
        `daemon off;\nworker_processes 1;\npid ${home}/nginx.pid;\nerror_log ${home}/error.log;\nevents { worker_connections 64; }\nhttp {\n  access_log off;\n  ${temp}\n${server}\n}\n`,
      );
      const nginx = run('nginx', ['-p', home, '-c', path.join(home, 'nginx.conf')]);
      await accepting(
        port,
        nginx.child,
        () => `${nginx.output()} ${readFileSync(path.join(home, 'error.log'), 'utf8')}`,
      );
      expect(await addressSeenThrough(ferry, contract, { port, tls: true, host: 'go.example.com' })).toBe('127.0.0.2');
    },
  );
});
