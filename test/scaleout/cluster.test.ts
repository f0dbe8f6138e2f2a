import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { CLICK_GROUP, clickGroupInfo, clickStreamKeys } from '../../src/modules/clicks/transport/click-stream.js';
import { freshPostgresDatabase } from '../helpers/app.js';
import { scaleOut, testRedis, waitFor } from '../helpers/scale-out.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { startWorker, type WorkerProcess } from '../helpers/worker-process.js';
import { missing, unless } from '../helpers/skip.js';

type Db = Kysely<Record<string, Record<string, unknown>>>;

const processes: Array<ServerProcess | WorkerProcess> = [];
afterAll(() => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * The scale-out setup as real processes on loopback: two API instances and one click worker over one fresh
 * PostgreSQL database and Redis (a key prefix of its own). Load is spread over both instances: sign-ups,
 * orders with Idempotency-Keys (some keys sent to both instances at once) and redirects. Mid-load one
 * instance is killed with SIGKILL, and the worker is killed with SIGKILL and started again.
 *
 * Afterwards: every order exists exactly once, and the click records are exactly the redirects that were
 * answered with a 3xx. Each redirect carries its own User-Agent, so this is checked visit by visit. A visit
 * that got no answer (in flight on the killed instance) may or may not have been recorded — its XADD may
 * have completed just before the kill — and is recorded at most once; such visits are counted and reported.
 */
describe.runIf(scaleOut)(unless(missing.scaleOut, 'a cluster of two API instances and a click worker'), () => {
  it(
    'when one instance and the worker are killed mid-load, then every order exists once and the click records equal the answered redirects',
    { timeout: 120_000 },
    async () => {
      const db = await freshPostgresDatabase();
      const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-cluster-'));
      const prefix = `ferry-cluster:${process.pid}:${randomBytes(4).toString('hex')}:`;
      const redis = testRedis();
      const pool = new pg.Pool({ connectionString: db.url, max: 2 });
      // pool.end() lets go of a client before its connection has closed; the database's forced drop then ends that
      // connection, and a pool without an error listener turns that into an uncaught exception in the test process.
      pool.on('error', () => undefined);
      const dbc: Db = new Kysely({ dialect: new PostgresDialect({ pool }) });
      const env: Record<string, string> = {
        DATABASE_URL: db.url,
        REDIS_URL: process.env.TEST_REDIS_URL!,
        REDIS_KEY_PREFIX: prefix,
        DATA_DIR: dataDir,
        JWT_SECRET: 'cluster-test-secret-that-is-at-least-32-bytes',
        RATE_LIMIT_PER_MINUTE: '1000000',
        TOKEN_RATE_LIMIT_PER_MINUTE: '1000000',
        REDIRECT_RATE_LIMIT_PER_MINUTE: '1000000',
        PASSWORD_HASH_COST: '10',
        PASSWORD_HASHES_PER_MINUTE: '100000',
        CLICK_FLUSH_MS: '100',
        CLICK_BATCH_SIZE: '100',
        CLICK_CLAIM_IDLE_MS: '1500',
        IDEMPOTENCY_LOCK_TIMEOUT_MS: '2000',
        // Four processes and the test share two cores: load shedding is not what this test is about.
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      };
      try {
        const [a, b] = await Promise.all([startServer(env), startServer(env)]);
        processes.push(a!, b!);
        let worker = await startWorker(env);
        processes.push(worker);

        // Set-up: users signed up on both instances (made active), and links.
        const users: Array<{ id: number; token: string }> = [];
        for (const [i, s] of [a!, b!, a!, b!].entries()) {
          const username = `cluster_${i}_${randomBytes(3).toString('hex')}`;
          const created = await fetch(
            `${s.baseUrl}/api/v1/users`,
            json({ username, email: `${username}@example.com`, password: 'long-enough-pw' }),
          );
          expect(created.status).toBe(201);
          const { id } = (await created.json()) as { id: number };
          await sql`update users set status = 'active' where id = ${id}`.execute(dbc);
          const login = await fetch(`${s.baseUrl}/api/v1/tokens`, json({ username, password: 'long-enough-pw' }));
          users.push({ id, token: ((await login.json()) as { accessToken: string }).accessToken });
        }
        const codes: string[] = [];
        for (let i = 0; i < 6; i += 1) {
          const res = await fetch(
            `${(i % 2 ? b! : a!).baseUrl}/api/v1/links`,
            json({ original_url: `https://example.com/cluster/${i}` }),
          );
          codes.push(((await res.json()) as { short_code: string }).short_code);
        }

        // Load.
        let bAlive = true;
        // Alternates per request number and per round of ten, so every kind of request reaches both instances.
        const instance = (n: number): ServerProcess => (bAlive && (n + Math.floor(n / 10)) % 2 === 1 ? b! : a!);
        const answered = new Set<string>();
        const unanswered = new Set<string>();
        const otherStatus: number[] = [];
        const orderKeys = new Map<string, number>(); // key → item id
        const signUps: string[] = [];
        let seq = 0;

        async function redirect(n: number): Promise<void> {
          const ua = `cluster-visit-${n}`;
          try {
            const res = await fetch(`${instance(n).baseUrl}/${codes[n % codes.length]}`, {
              redirect: 'manual',
              headers: { 'user-agent': ua },
            });
            if (res.status >= 300 && res.status < 400) answered.add(ua);
            else otherStatus.push(res.status);
          } catch {
            unanswered.add(ua);
          }
        }

        /** Until the order is confirmed: a retry goes to the live instance, with the same key. */
        async function order(n: number, bothAtOnce: boolean): Promise<void> {
          const key = `cluster-order-${n}`;
          orderKeys.set(key, n);
          const user = users[n % users.length]!;
          const send = async (s: ServerProcess): Promise<number> => {
            try {
              const res = await fetch(`${s.baseUrl}/api/v1/orders`, {
                method: 'POST',
                headers: {
                  'content-type': 'application/json',
                  authorization: `Bearer ${user.token}`,
                  'idempotency-key': key,
                },
                body: JSON.stringify({ itemId: n, quantity: 1 }),
              });
              await res.arrayBuffer();
              return res.status;
            } catch {
              return 0;
            }
          };
          let statuses = await Promise.all(bothAtOnce ? [send(a!), send(b!)] : [send(instance(n))]);
          const deadline = Date.now() + 20_000;
          while (!statuses.includes(201)) {
            if (Date.now() > deadline) throw new Error(`order ${key} never confirmed: ${statuses.join(', ')}`);
            for (const s of statuses)
              if (s !== 0 && s !== 409 && s !== 503) throw new Error(`order ${key}: unexpected ${s}`);
            await sleep(100);
            statuses = [await send(instance(n))];
          }
        }

        async function signUp(n: number): Promise<void> {
          const username = `cluster_su_${n}_${prefix.slice(-9, -1)}`;
          signUps.push(username);
          for (let s = instance(n); ; s = a!) {
            try {
              const res = await fetch(
                `${s.baseUrl}/api/v1/users`,
                json({ username, email: `${username}@example.com`, password: 'long-enough-pw' }),
              );
              await res.arrayBuffer();
              if (res.status === 201 || res.status === 409) return; // 409: the attempt cut by the kill had created it
              throw new Error(`sign-up ${username}: ${res.status}`);
            } catch (err) {
              if (err instanceof Error && err.message.startsWith('sign-up')) throw err;
              await sleep(50);
            }
          }
        }

        let stop = false;
        const loop = async () => {
          while (!stop) {
            const n = seq++;
            const kind = n % 10;
            if (kind < 6) await redirect(n);
            else if (kind < 8) await order(n, false);
            else if (kind === 8) await signUp(n);
            else await order(n, true);
          }
        };
        const started = Date.now();
        const timeline = (async () => {
          await sleep(1500);
          b!.child.kill('SIGKILL');
          bAlive = false;
          await sleep(1000);
          worker.child.kill('SIGKILL');
          await worker.exited;
          await sleep(1500);
          worker = await startWorker(env);
          processes.push(worker);
          await sleep(1500);
          stop = true;
        })();
        await Promise.all([...Array.from({ length: 12 }, loop), timeline]);
        const loadMs = Date.now() - started;

        // Drain: the restarted worker claims what the killed one held and reads the rest.
        const stream = clickStreamKeys(prefix).stream;
        await waitFor(
          'the worker to write every click',
          async () => {
            const info = await clickGroupInfo(redis, stream);
            const [pending] = (await redis.xpending(stream, CLICK_GROUP)) as [number];
            return info !== null && info.lag === 0 && pending === 0;
          },
          20_000,
        );

        // Orders: each key exactly once.
        const orders = (
          await sql<{
            item_id: number;
            n: number;
          }>`select item_id, count(*)::int as n from orders group by item_id`.execute(dbc)
        ).rows;
        expect(orders.filter((o) => o.n !== 1)).toEqual([]);
        // Number(): a bigint comes as a string unless another file of this worker set pg's parser (pg-driver.ts).
        expect(orders.map((o) => Number(o.item_id)).sort((x, y) => x - y)).toEqual(
          [...orderKeys.values()].sort((x, y) => x - y),
        );
        // Sign-ups: each exactly once.
        const names = (
          await sql<{ n: number }>`select count(*)::int as n from users where username like 'cluster_su_%'`.execute(dbc)
        ).rows[0]!.n;
        expect(names).toBe(signUps.length);

        // Clicks: the answered redirects, each exactly once; nothing else but unanswered ones, at most once.
        const records = (
          await sql<{
            ua: string;
            n: number;
          }>`select user_agent as ua, count(*)::int as n from clicks group by user_agent`.execute(dbc)
        ).rows;
        const recorded = new Map(records.map((r) => [r.ua, r.n]));
        expect(otherStatus).toEqual([]);
        expect([...answered].filter((ua) => recorded.get(ua) !== 1)).toEqual([]);
        expect(records.filter((r) => r.n !== 1 || !(answered.has(r.ua) || unanswered.has(r.ua)))).toEqual([]);
        const recordedUnanswered = [...unanswered].filter((ua) => recorded.has(ua)).length;
        expect(records.length).toBe(answered.size + recordedUnanswered);
        const counters = (
          await sql<{ n: number }>`select coalesce(sum(click_count), 0)::int as n from links`.execute(dbc)
        ).rows[0]!.n;
        expect(counters).toBe(records.length);
        expect(answered.size).toBeGreaterThan(100);
        expect(unanswered.size).toBeLessThanOrEqual(12); // at most the loops in flight on the killed instance

        // The survivors stop cleanly.
        worker.child.kill('SIGTERM');
        a!.child.kill('SIGTERM');
        expect((await worker.exited).code).toBe(0);
        expect((await a!.exited).code).toBe(0);
        expect(worker.logs.map((l) => l.msg)).toContain('click worker stopped');

        process.stdout.write(
          `cluster: ${loadMs} ms of load, ${answered.size} redirects answered, ${unanswered.size} unanswered ` +
            `(${recordedUnanswered} of them recorded), ${orderKeys.size} orders, ${signUps.length} sign-ups\n`,
        );
      } finally {
        for (const p of processes)
          if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
        await dbc.destroy();
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length) await redis.del(...keys);
        await redis.quit();
        await db.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
