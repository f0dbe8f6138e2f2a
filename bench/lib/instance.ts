/**
 * An instance of the compiled server for the benchmarks that measure one request at a time against a big data
 * set (bench/million.ts, bench/scale.ts): its environment, its admin and its one user, and fresh PostgreSQL
 * databases for it.
 */
import pg from 'pg';
import { SERVER_ARGS, startServer, type Server } from './proc.js';

/** The first admin of every bench server (it activates the ordering user). */
export const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };

/** Ferry as in production, with rate limits raised so that one client address can load it (see docs/performance.md). */
export const FERRY_ENV = {
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
  RATE_LIMIT_PER_MINUTE: '1000000',
  REDIRECT_RATE_LIMIT_PER_MINUTE: '10000000',
  PASSWORD_HASHES_PER_MINUTE: '100000',
  PASSWORD_HASH_COST: '10',
  ADMIN_USERNAME: ADMIN.username,
  ADMIN_PASSWORD: ADMIN.password,
};

export interface Instance {
  dataDir: string;
  databaseUrl: string | null;
}

export async function call(
  server: Server,
  method: string,
  p: string,
  body: unknown,
  token?: string,
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {
    'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
  };
  if (token) headers.authorization = `Bearer ${token}`;
  let res = await fetch(`${server.url}${p}`, { method, headers, body: JSON.stringify(body) });
  // Setting up: a busy machine's start-up may trip the overload guard for a sample or two.
  for (let retry = 0; res.status === 503 && retry < 20; retry += 1) {
    await new Promise((r) => setTimeout(r, 1000));
    res = await fetch(`${server.url}${p}`, { method, headers, body: JSON.stringify(body) });
  }
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/**
 * The server on `inst`, with `env` over the defaults; measured once the routes' schemas are compiled (the server
 * compiles them in the background after it listens).
 */
export const startInstance = (inst: Instance, env: Record<string, string> = {}) =>
  startServer(
    'ferry',
    [...SERVER_ARGS],
    {
      ...FERRY_ENV,
      ...env,
      DATA_DIR: inst.dataDir,
      ...(inst.databaseUrl ? { DATABASE_URL: inst.databaseUrl } : {}),
    },
    { readyLog: 'schema compilers warmed' },
  );

/** The admin's and the user's tokens, the user (active) created on first use. */
export async function tokens(
  server: Server,
  create: boolean,
): Promise<{ admin: string; user: string; userId: number }> {
  const admin = String((await call(server, 'POST', '/api/v1/tokens', ADMIN)).accessToken);
  if (create) {
    const u = await call(server, 'POST', '/api/v1/users', {
      username: 'bench',
      email: 'bench@example.com',
      password: 'bench-password',
    });
    await call(server, 'PATCH', `/api/v1/users/${String(u.id)}`, { status: 'active' }, admin);
  }
  const login = await call(server, 'POST', '/api/v1/tokens', { username: 'bench', password: 'bench-password' });
  const me = await fetch(`${server.url}/api/v1/users/me`, {
    headers: { authorization: `Bearer ${String(login.accessToken)}` },
  });
  return { admin, user: String(login.accessToken), userId: Number(((await me.json()) as { id: number }).id) };
}

/** Databases `names` created on the PostgreSQL server of `serverUrl`: their URLs, and how to drop them. */
export async function pgDatabases(
  serverUrl: string,
  names: string[],
): Promise<{ urls: string[]; drop: () => Promise<void> }> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  for (const n of names) await admin.query(`create database ${n}`);
  const urlOf = (n: string) => Object.assign(new URL(serverUrl), { pathname: `/${n}` }).toString();
  return {
    urls: names.map(urlOf),
    drop: async () => {
      for (const n of names) await admin.query(`drop database if exists ${n} with (force)`);
      await admin.end();
    },
  };
}
