import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterEach, inject } from 'vitest';
import { buildApp, type AppDeps } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createStorage, type Storage } from '../../src/db/database.js';
import { TEST_PASSWORD_HASH_COST } from './server-process.js';
import { closeRedis, createRedis } from '../../src/infra/redis.js';
import { ContractValidator } from './contract.js';
import { copyPostgresTemplate, copySqliteTemplate, onAdmin, postgresDatabaseUrl } from './db-templates.js';

export type Engine = 'sqlite' | 'postgres';

/**
 * SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (global-setup prints the skip line if not). The
 * PostgreSQL run also puts the shared state in Redis when TEST_REDIS_URL is set: the scale-out configuration.
 */
export const engines: Engine[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** A clock tests can move. */
export class TestClock {
  constructor(public ms = Date.now()) {}
  now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** parsed JSON body, or undefined when there is none */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export interface RequestOptions {
  method?: InjectOptions['method'];
  url: string;
  token?: string;
  headers?: Record<string, string>;
  /** an object is sent as JSON; a string is sent as is */
  payload?: unknown;
  /** the client's socket address (request.ip without a trusted proxy); inject's default is 127.0.0.1 */
  remoteAddress?: string;
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  storage: Storage;
  clock: TestClock;
  contract: ContractValidator;
  redisPrefix: string;
  /** Sends a request through app.inject() and fails the test if the response breaks the OpenAPI document. */
  request(opts: RequestOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

/**
 * For the tests of a describe block that each open a new, empty PostgreSQL database as a storage of one connection
 * (migrations, triggers): `open()` makes it; it is closed and dropped after each test.
 */
export function freshPostgresStorages(): () => Promise<{ storage: Storage; url: string }> {
  let storage: Storage | null = null;
  let drop: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await storage?.close();
    await drop?.();
    [storage, drop] = [null, null];
  });
  return async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    storage = createStorage({ databaseUrl: db.url, dataDir: tmpdir(), dbPoolMax: 1 });
    return { storage, url: db.url };
  };
}

/** A new, empty PostgreSQL database (for tests that restart an app on the same data); drop() removes it. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `ferry_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await onAdmin((c) => c.query(`create database ${name}`));
  return {
    url: postgresDatabaseUrl(name),
    drop: async () => {
      await onAdmin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: TestClock;
  /** reuse a data directory (restart tests) */
  dataDir?: string;
  /** reuse a database URL (restart tests on PostgreSQL) */
  databaseUrl?: string;
  /** capture the app's pino log lines (newline-delimited JSON, level info and up) */
  logStream?: NodeJS.WritableStream;
  /** share another app's Redis keys (several instances) */
  redisPrefix?: string;
  /** another Redis than TEST_REDIS_URL for the PostgreSQL run (a private server a test stops and restarts) */
  redisUrl?: string;
  /** other dependencies for buildApp (metrics, rate-limit store, readiness checks) */
  deps?: Omit<AppDeps, 'storage' | 'clock'>;
}

/** Builds the app exactly as server.ts does, on a fresh (migrated) database of the given engine. */
export async function createTestApp(engine: Engine, opts: TestAppOptions = {}): Promise<TestApp> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), 'ferry-test-'));
  let dropDb: (() => Promise<void>) | null = null;
  let databaseUrl = opts.databaseUrl;
  // A database of its own, copied from the run's migrated one (db-templates.ts).
  const templates = inject('databaseTemplates');
  if (engine === 'postgres' && !databaseUrl) {
    const copy = await copyPostgresTemplate(templates);
    databaseUrl = copy.url;
    dropDb = copy.drop;
  } else if (engine === 'sqlite' && ownDir) copySqliteTemplate(templates, dataDir);
  const config = loadConfig({
    DATA_DIR: dataDir,
    JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long!',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_PER_MINUTE: '100000',
    TOKEN_RATE_LIMIT_PER_MINUTE: '100000',
    PASSWORD_HASHES_PER_MINUTE: '100000',
    PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
    // No shedding on event-loop delay: test workers share a few cores, and a synchronous step elsewhere in the
    // process (Ajv compiling a schema, a fuzz run) made unrelated requests answer 503. test/plugins/overload.test.ts
    // sets its bounds explicitly.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    // Destination checks (SPEC §24) would send requests to the test links' made-up hosts in the background:
    // the tests of the checks turn them on (test/modules/link-checks).
    LINK_CHECKS: 'false',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...opts.env,
  });
  const clock = opts.clock ?? new TestClock();
  const storage = createStorage(config);
  // The PostgreSQL run is the scale-out run: with TEST_REDIS_URL it also uses Redis, under a key prefix of its own.
  const redisUrl = opts.redisUrl ?? process.env.TEST_REDIS_URL;
  const redis = engine === 'postgres' && redisUrl ? createRedis(redisUrl) : null;
  const redisPrefix = opts.redisPrefix ?? `ferry-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
  const logger = opts.logStream ? { level: 'info', stream: opts.logStream } : undefined;
  let app: FastifyInstance;
  try {
    app = await buildApp(config, { ...opts.deps, storage, clock, redis, redisPrefix, ...(logger ? { logger } : {}) });
    await app.ready();
  } catch (err) {
    // A start-up that fails (as some tests want) must not leak the database, Redis or the data directory.
    await storage.close();
    await redis?.quit();
    if (dropDb) await dropDb();
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  // Everything the served document depends on; the data directory and the database's name do not change it.
  const builtFrom = {
    config: { ...config, dataDir: null, databaseUrl: config.databaseUrl === null ? null : 'postgres' },
    redis: redis !== null,
    deps: Object.keys(opts.deps ?? {}).sort(),
  };
  const contract = await ContractValidator.fromApp(app, builtFrom);
  let closed = false;

  return {
    app,
    config,
    storage,
    clock,
    contract,
    redisPrefix,
    async request(o) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let payload: string | undefined;
      if (o.payload !== undefined) {
        payload = typeof o.payload === 'string' ? o.payload : JSON.stringify(o.payload);
        headers['content-type'] ??= 'application/json';
      }
      const res = await app.inject({
        method: o.method ?? 'GET',
        url: o.url,
        headers,
        payload,
        ...(o.remoteAddress ? { remoteAddress: o.remoteAddress } : {}),
      });
      const problems = contract.check(
        o.method ?? 'GET',
        o.url,
        res.statusCode,
        res.headers['content-type'] as string | undefined,
        res.body,
      );
      if (problems.length)
        throw new Error(
          `Response breaks the OpenAPI contract:\n${problems.join('\n')}\nbody: ${res.body.slice(0, 500)}`,
        );
      let body: unknown;
      if (res.body && String(res.headers['content-type'] ?? '').includes('json')) body = JSON.parse(res.body);
      return { status: res.statusCode, headers: res.headers, body, text: res.body };
    },
    async close() {
      // Idempotent: restart tests close an app explicitly and again in their cleanup.
      if (closed) return;
      closed = true;
      await app.close();
      await storage.close();
      if (redis?.status === 'ready' && opts.redisPrefix === undefined) {
        const keys = await redis.keys(`${redisPrefix}*`);
        if (keys.length) await redis.del(...keys);
      }
      if (redis) await closeRedis(redis);
      if (dropDb) await dropDb();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
