import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoad, type LoadRequest } from '../helpers/load.js';
import { processStorage } from '../helpers/process-storage.js';
import { scaleOut, startPrivateRedis, testRedis, waitFor } from '../helpers/scale-out.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * SPEC §17, "A lost database connection never ends the process": a real server process under load, whose
 * PostgreSQL backends are terminated again and again (pg_terminate_backend, on this test's own database only:
 * the shared server is never restarted), then whose database refuses connections for a while (ALLOW_CONNECTIONS
 * false); and the same with a private Redis that is killed and started again. The process stays up, nothing
 * is answered 500, what needed the dependency is 503 with Retry-After, /readyz names the dependency while it is
 * gone and is ready again within seconds of its return.
 */
const ADMIN = { username: 'outage_admin', password: 'outage-admin-password-1' };
const servers: ServerProcess[] = [];
afterEach(() => {
  for (const s of servers.splice(0))
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function json(res: Response): Promise<Record<string, any>> {
  return (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The server, an admin token, and the load's requests: redirects (one plain, one counted), reads and writes. */
async function serveUnderLoad(env: Record<string, string>) {
  const server = await startServer({
    ...env,
    JWT_SECRET: 'outage-test-secret-at-least-32-bytes-long',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    RATE_LIMIT_PER_MINUTE: '1000000',
    REDIRECT_RATE_LIMIT_PER_MINUTE: '1000000',
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  });
  servers.push(server);
  const base = server.baseUrl;
  const post = (path: string, body: unknown, token?: string) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  const token = (await json(await post('/api/v1/tokens', ADMIN))).accessToken as string;
  const plain = (await json(await post('/api/v1/links', { original_url: 'https://example.com/plain' }, token)))
    .short_code as string;
  const counted = (
    await json(
      await post('/api/v1/links', { original_url: 'https://example.com/counted', max_visits: 1_000_000 }, token),
    )
  ).short_code as string;
  const human = {
    'user-agent':
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  };
  const requests: LoadRequest[] = [
    () => ({ path: `/${plain}`, headers: human }),
    () => ({ path: `/${counted}`, headers: human }),
    () => ({ path: '/api/v1/users/me', token }),
    () => ({ path: `/api/v1/links/${plain}`, token }),
    (n) => ({ method: 'POST', path: '/api/v1/links', token, body: { original_url: `https://example.com/${n}` } }),
  ];
  const readiness = async () => {
    const res = await fetch(`${base}/readyz`);
    return {
      status: res.status,
      failing:
        res.status === 200 ? [] : ((await json(res)).error.details as Array<{ field: string }>).map((d) => d.field),
    };
  };
  return { server, requests, readiness };
}

const errorLines = (server: ServerProcess) => server.logs.filter((l) => Number(l.level) >= 50);
/** The error-level lines by message, with how often each was logged. */
const errorSummary = (server: ServerProcess): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const l of errorLines(server)) out[String(l.msg)] = (out[String(l.msg)] ?? 0) + 1;
  return out;
};

/** `check`, failing at once (with the process's last log lines) if the server process has exited. */
const whileUp = (server: ServerProcess, check: () => Promise<boolean> | boolean) => async (): Promise<boolean> => {
  if (server.child.exitCode !== null || server.child.signalCode !== null) {
    throw new Error(
      `the server exited (${server.child.exitCode ?? server.child.signalCode}): ${server.stderr().slice(-1500)}`,
    );
  }
  return check();
};

describe.runIf(missing.postgres === null)(
  unless(missing.postgres, 'when PostgreSQL connections are lost under load'),
  () => {
    it(
      'then the process stays up, nothing is 500, requests that need the database are 503 with Retry-After, and /readyz is back within seconds',
      { timeout: 180_000 },
      async () => {
        // As in the scale-out setup when TEST_REDIS_URL is set (the clicks then travel through Redis), under keys of its own.
        const prefix = `ferry-outage:${process.pid}:${Date.now()}:`;
        const { env, cleanup } = await processStorage(
          'postgres',
          process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix } : {},
        );
        const dbName = new URL(env.DATABASE_URL!).pathname.slice(1);
        const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
        await admin.connect();
        const terminate = async () =>
          (
            await admin.query(
              'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
              [dbName],
            )
          ).rows[0].n as number;
        try {
          const { server, requests, readiness } = await serveUnderLoad(env);
          const load = startLoad(server.baseUrl, requests, 8);
          await waitFor(
            'the load to get going',
            whileUp(server, async () => load.tally.total >= 200),
            30_000,
          );

          // Backends terminated five times under load: the pool's clients die idle and checked out.
          let terminated = 0;
          for (let round = 0; round < 5; round += 1) {
            const before = load.tally.total;
            terminated += await terminate();
            await waitFor(
              'answers after the termination',
              whileUp(server, async () => load.tally.total >= before + 100),
              30_000,
            );
          }
          expect(server.child.exitCode).toBeNull();

          // An outage: the database refuses connections until it is allowed again.
          await admin.query(`alter database ${dbName} allow_connections false`);
          await terminate();
          const outageStarted = load.count(503);
          await waitFor(
            '/readyz to name the database',
            whileUp(server, async () => (await readiness()).failing.includes('database')),
            15_000,
          );
          await waitFor(
            'requests to be answered 503',
            whileUp(server, async () => load.count(503) >= outageStarted + 20),
            15_000,
          );
          await admin.query(`alter database ${dbName} allow_connections true`);
          const back = Date.now();
          await waitFor(
            '/readyz to be ready again',
            whileUp(server, async () => (await readiness()).status === 200),
            15_000,
          );
          const readyAfterMs = Date.now() - back;
          const served = load.count(201);
          await waitFor(
            'writes to succeed again',
            whileUp(server, async () => load.count(201) >= served + 20),
            15_000,
          );
          const tally = await load.stop();

          // Reported with the run (the figures): what the load got, and how fast readiness returned.
          console.log(
            `PostgreSQL outages: ${terminated} backends terminated in 5 rounds, then refused connections; ${tally.total} answers ${JSON.stringify(tally.statuses)}, 503 codes ${JSON.stringify(tally.codes)}, /readyz ready ${readyAfterMs} ms after the database came back; error lines ${JSON.stringify(errorSummary(server))}`,
          );
          expect(server.child.exitCode).toBeNull();
          expect(tally.bad).toEqual([]);
          expect(tally.unanswered).toEqual([]);
          expect(tally.codes.SERVICE_UNAVAILABLE).toBeGreaterThan(0);
          expect(readyAfterMs).toBeLessThan(10_000);
          // The loss is logged, not every request that met it: a few lines, not thousands.
          expect(errorLines(server).length).toBeLessThan(20);
          expect(server.logs.filter((l) => l.msg === 'request failed')).toEqual([]);
        } finally {
          await admin.query(`alter database ${dbName} allow_connections true`).catch(() => undefined);
          await admin.end();
          await cleanup();
          if (process.env.TEST_REDIS_URL) {
            const redis = testRedis();
            const keys = await redis.keys(`${prefix}*`);
            if (keys.length) await redis.del(...keys);
            await redis.quit();
          }
        }
      },
    );
  },
);

describe.runIf(scaleOut)(unless(missing.scaleOut, 'when Redis is lost under load'), () => {
  it(
    'then the process stays up, nothing is 500, what needs Redis is 503 with Retry-After, and /readyz is back within seconds',
    { timeout: 180_000 },
    async () => {
      const redis = await startPrivateRedis();
      const { env, cleanup } = await processStorage('postgres', { REDIS_URL: redis.url });
      try {
        const { server, requests, readiness } = await serveUnderLoad(env);
        const load = startLoad(server.baseUrl, requests, 8);
        await waitFor(
          'the load to get going',
          whileUp(server, async () => load.tally.total >= 200),
          30_000,
        );
        for (let round = 0; round < 3; round += 1) {
          await redis.kill();
          const before = load.count(503);
          await waitFor(
            '/readyz to name redis',
            whileUp(server, async () => (await readiness()).failing.includes('redis')),
            15_000,
          );
          await waitFor(
            'requests to be answered 503',
            whileUp(server, async () => load.count(503) >= before + 10),
            15_000,
          );
          await redis.start();
          const back = Date.now();
          await waitFor(
            '/readyz to be ready again',
            whileUp(server, async () => (await readiness()).status === 200),
            15_000,
          );
          console.log(`Redis outage ${round + 1}: /readyz ready ${Date.now() - back} ms after Redis came back`);
          expect(Date.now() - back).toBeLessThan(10_000);
        }
        const tally = await load.stop();
        console.log(
          `Redis outages: ${tally.total} answers ${JSON.stringify(tally.statuses)}, 503 codes ${JSON.stringify(tally.codes)}; error lines ${JSON.stringify(errorSummary(server))}`,
        );
        expect(server.child.exitCode).toBeNull();
        expect(tally.bad).toEqual([]);
        expect(tally.unanswered).toEqual([]);
        expect(server.logs.filter((l) => l.msg === 'request failed')).toEqual([]);
      } finally {
        await redis.kill();
        await cleanup();
      }
    },
  );
});
