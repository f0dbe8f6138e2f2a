import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { engines, type Engine } from '../helpers/app.js';
import { ContractValidator, type OpenApiDoc } from '../helpers/contract.js';
import { processStorage } from '../helpers/process-storage.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * SPEC §12: "SQLite is one writer: a write transaction never fails with 'database is locked' under any mix of
 * traffic." Every kind of write runs in parallel loops against a real server process, with visits (whose
 * clicks the writer thread commits on its own connection) in between, for several seconds: not one 5xx.
 */
const ADMIN = { username: 'load_admin', password: 'admin-password-123' };
const LOAD_MS = 6_000;
const MAX_LOAD_MS = 40_000;
const USERS = 4;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

class Client {
  readonly statuses = new Map<string, number[]>();
  readonly problems: string[] = [];
  constructor(
    private readonly baseUrl: string,
    private readonly contract: ContractValidator,
  ) {}

  async send(
    kind: string,
    method: string,
    url: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${url}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      redirect: 'manual',
    });
    const text = await res.text();
    const list = this.statuses.get(kind) ?? [];
    list.push(res.status);
    this.statuses.set(kind, list);
    if (res.status >= 500) this.problems.push(`${kind}: ${method} ${url} answered ${res.status} ${text}`);
    this.problems.push(
      ...this.contract.check(method, url, res.status, res.headers.get('content-type') ?? undefined, text),
    );
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      // a redirect's body, or an HTML page: not JSON and not needed
    }
    return { status: res.status, headers: res.headers, body };
  }
}

const storageEnv = (engine: Engine) =>
  processStorage(engine, {
    JWT_SECRET: 'mixed-load-test-secret-at-least-32-bytes!',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    RATE_LIMIT_PER_MINUTE: '1000000',
    // Clicks reach the database often, so the writer's commits interleave with the API's transactions.
    CLICK_FLUSH_MS: '10',
    // No load shedding: on a busy 2-core machine the event loop lags, and its 503s would hide the 500s sought.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  });

let server: ServerProcess | null = null;
afterEach(() => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  server = null;
});

describe.each(engines)('mixed write load on a real server process on %s', (engine) => {
  it(
    'when every kind of write runs in parallel loops beside visits for several seconds, then no request answers 5xx',
    { timeout: 120_000 },
    async () => {
      const { env, cleanup } = await storageEnv(engine);
      try {
        server = await startServer(env);
        const docs = await fetch(`${server.baseUrl}/v3/api-docs`);
        const api = new Client(server.baseUrl, new ContractValidator((await docs.json()) as OpenApiDoc));

        const admin = await api.send('setup', 'POST', '/api/v1/tokens', { body: ADMIN });
        const adminToken = admin.body.accessToken as string;
        const users: Array<{ id: number; username: string; password: string; token: string; code: string }> = [];
        for (let i = 0; i < USERS; i += 1) {
          const username = `load_${i}_${randomBytes(3).toString('hex')}`;
          const password = 'load-test-password';
          const created = await api.send('setup', 'POST', '/api/v1/users', {
            body: { username, email: `${username}@example.com`, password },
          });
          const id = created.body.id as number;
          await api.send('setup', 'PATCH', `/api/v1/users/${id}`, { token: adminToken, body: { status: 'active' } });
          const token = (await api.send('setup', 'POST', '/api/v1/tokens', { body: { username, password } })).body
            .accessToken as string;
          const link = await api.send('setup', 'POST', '/api/v1/links', {
            token,
            body: { original_url: `https://example.com/${username}` },
          });
          users.push({ id, username, password, token, code: link.body.short_code as string });
        }
        expect(api.problems).toEqual([]);
        expect(users.every((u) => u.token && u.code)).toBe(true);

        // At least LOAD_MS, and until every kind of write has succeeded often (a loaded machine is slow), within a cap.
        const started = Date.now();
        const succeeded = (kind: string, status: number) =>
          (api.statuses.get(kind) ?? []).filter((s) => s === status).length;
        const wanted: Array<[kind: string, status: number, atLeast: number]> = [
          ['order', 201, 20],
          ['createLink', 201, 20],
          ['bulkLinks', 200, 6],
          ['patchLink', 200, 20],
          ['patchUser', 200, 20],
          ['signUp', 201, 4],
          ['tokens', 201, 4],
          ['tokens', 204, 4],
          ['apiKeys', 201, 6],
          ['visit', 302, 50],
        ];
        const enough = () => wanted.every(([kind, status, atLeast]) => succeeded(kind, status) >= atLeast);
        const loading = () => Date.now() - started < LOAD_MS || (!enough() && Date.now() - started < MAX_LOAD_MS);
        let n = 0;
        const loop = (step: (u: (typeof users)[number], i: number) => Promise<unknown>) => async () => {
          while (loading()) {
            n += 1;
            await step(users[n % users.length]!, n);
          }
        };
        const writes = {
          order: (u: (typeof users)[number], i: number) =>
            api.send('order', 'POST', '/api/v1/orders', {
              token: u.token,
              body: { itemId: 1 + (i % 50), quantity: 1 },
              headers: { 'idempotency-key': `k-${i}-${randomBytes(4).toString('hex')}` },
            }),
          createLink: (u: (typeof users)[number], i: number) =>
            api.send('createLink', 'POST', '/api/v1/links', {
              token: u.token,
              body: { original_url: `https://example.com/new/${i}`, tags: ['load'] },
            }),
          bulkLinks: (u: (typeof users)[number], i: number) =>
            api.send('bulkLinks', 'POST', '/api/v1/links/bulk', {
              token: u.token,
              body: {
                links: [{ original_url: `https://example.com/a/${i}` }, { original_url: `https://example.com/b/${i}` }],
              },
            }),
          patchLink: (u: (typeof users)[number], i: number) =>
            api.send('patchLink', 'PATCH', `/api/v1/links/${u.code}`, {
              token: u.token,
              body: { tags: [`t${i % 7}`], max_visits: null },
            }),
          patchUser: (u: (typeof users)[number], i: number) =>
            api.send('patchUser', 'PATCH', `/api/v1/users/${u.id}`, {
              token: u.token,
              body: { name: `Name ${i}`, age: i % 100 },
            }),
          signUp: (_u: (typeof users)[number], i: number) => {
            const username = `su_${i}_${randomBytes(3).toString('hex')}`;
            return api.send('signUp', 'POST', '/api/v1/users', {
              body: { username, email: `${username}@example.com`, password: 'sign-up-password' },
            });
          },
          tokens: async (u: (typeof users)[number]) => {
            const issued = await api.send('tokens', 'POST', '/api/v1/tokens', {
              body: { username: u.username, password: u.password },
            });
            const jti = issued.headers.get('location')?.split('/').pop();
            if (issued.status === 201 && jti)
              await api.send('tokens', 'DELETE', `/api/v1/tokens/${jti}`, { token: issued.body.accessToken as string });
          },
          apiKeys: async (u: (typeof users)[number], i: number) => {
            const key = await api.send('apiKeys', 'POST', `/api/v1/users/${u.id}/api-keys`, {
              token: u.token,
              body: { name: `k${i}`, scopes: ['links:read'] },
            });
            if (key.status === 201)
              await api.send('apiKeys', 'DELETE', `/api/v1/users/${u.id}/api-keys/${key.body.id as number}`, {
                token: u.token,
              });
          },
          visit: (u: (typeof users)[number]) => api.send('visit', 'GET', `/${u.code}`),
        };
        const loops = Object.values(writes).flatMap((step) => [loop(step)(), loop(step)()]);
        for (let i = 0; i < 6; i += 1) loops.push(loop(writes.visit)());
        await Promise.all(loops);

        expect(api.problems).toEqual([]);
        // Every kind of write did happen, many times: the load was real, not a wall of refusals.
        for (const [kind, status, atLeast] of wanted)
          expect({ kind, status, n: succeeded(kind, status) }).toEqual({
            kind,
            status,
            n: expect.toSatisfy((n: number) => n >= atLeast),
          });
      } finally {
        server?.child.kill('SIGTERM');
        if (server) await server.exited;
        await cleanup();
      }
    },
  );
});
