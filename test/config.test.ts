import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { compiledEntry } from './helpers/child-process.js';
import { configProblems } from './helpers/config-problems.js';

/** SPEC §11: a bad value stops start-up with one readable line naming the variable and what is allowed. */
describe('configuration', () => {
  it('when nothing is set, then the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: './data',
      publicBaseUrl: 'http://127.0.0.1:3000',
      databaseUrl: null,
      redisUrl: null,
      jwtSecret: null,
      tokenTtlSeconds: 3600,
      adminUsername: null,
      redirectStatus: 302,
      corsOrigins: [],
      bodyLimitBytes: 65536,
      idempotencyTtlSeconds: 86400,
      maintenanceMode: false,
      logLevel: 'info',
      trustProxy: false,
    });
  });

  it("when CLICK_QUEUE_LIMIT is unset, then the embedded engine's queue may hold a backlog of whole writer windows, the Redis stream of PostgreSQL two minutes at 30,000 clicks/s, the PostgreSQL in-process queue 100,000; a value set wins", () => {
    expect(loadConfig({}).clickQueueLimit).toBe(1_000_000);
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).clickQueueLimit).toBe(100_000);
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db', REDIS_URL: 'redis://h:6379' }).clickQueueLimit).toBe(
      4_000_000,
    );
    // SQLite with Redis (shared limits): its clicks still go through the journal to the writer's windows
    expect(loadConfig({ REDIS_URL: 'redis://h:6379' }).clickQueueLimit).toBe(1_000_000);
    expect(loadConfig({ REDIS_URL: 'redis://h:6379', CLICK_QUEUE_LIMIT: '2000' }).clickQueueLimit).toBe(2000);
    expect(loadConfig({ CLICK_QUEUE_LIMIT: '2000' }).clickQueueLimit).toBe(2000);
    expect(configProblems({ CLICK_QUEUE_LIMIT: '50' })).toMatch(
      /^Invalid configuration: CLICK_QUEUE_LIMIT="50": must be an integer between 100 and/,
    );
  });

  it('when values are good, then they are parsed into the typed config', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@h/db',
      CORS_ORIGINS: 'https://a.example, http://localhost:5173',
      TRUST_PROXY: '2',
      MAINTENANCE_MODE: 'yes',
      REDIRECT_STATUS: '308',
      BODY_LIMIT_BYTES: '2048',
      LOG_LEVEL: 'warn',
    });
    expect(c).toMatchObject({
      port: 8080,
      publicBaseUrl: 'http://127.0.0.1:8080',
      databaseUrl: 'postgres://u@h/db',
      corsOrigins: ['https://a.example', 'http://localhost:5173'],
      trustProxy: 2,
      maintenanceMode: true,
      redirectStatus: 308,
      bodyLimitBytes: 2048,
      logLevel: 'warn',
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    [{ PORT: 'abc' }, /^Invalid configuration: PORT="abc": must be an integer between 0 and 65535$/],
    [{ PORT: '70000' }, /^Invalid configuration: PORT="70000": must be an integer between 0 and 65535$/],
    [{ PORT: '-1' }, /PORT="-1": must be an integer/],
    [{ JWT_SECRET: 'short' }, /^Invalid configuration: JWT_SECRET=.*must be at least 32 bytes long$/],
    [{ TOKEN_TTL_SECONDS: '0' }, /TOKEN_TTL_SECONDS="0": must be an integer between 60 and/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL="mysql:\/\/x": must be a postgres:\/\/ URL/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL="http:\/\/x": must be a redis:\/\//],
    [{ REDIRECT_STATUS: '303' }, /REDIRECT_STATUS="303": must be one of 301, 302, 307, 308/],
    [{ CORS_ORIGINS: 'https://a.example/path' }, /CORS_ORIGINS=.*must be a comma-separated list of origins/],
    [{ BODY_LIMIT_BYTES: '1kb' }, /BODY_LIMIT_BYTES="1kb": must be an integer/],
    [{ MAINTENANCE_MODE: 'maybe' }, /MAINTENANCE_MODE="maybe": must be true or false/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL="loud": must be one of fatal, error, warn, info, debug, trace, silent/],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, /PUBLIC_BASE_URL="ftp:\/\/x": must be an absolute http\(s\) URL/],
    [{ TRUST_PROXY: 'everyone' }, /TRUST_PROXY="everyone": must be/],
    [{ PASSWORD_HASH_COST: '9' }, /PASSWORD_HASH_COST="9": must be an integer between 10 and 20/],
    [{ ADMIN_USERNAME: 'root' }, /ADMIN_USERNAME and ADMIN_PASSWORD: set both or neither/],
    [{ ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'short' }, /ADMIN_PASSWORD=.*must be 8-128 characters long/],
  ])('when %o is set, then one line names the variable and what is allowed', (env, line) => {
    const message = configProblems(env as Record<string, string>);
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(line);
  });

  it('when several variables are bad, then one line each, all reported at once', () => {
    const lines = configProblems({ PORT: 'x', LOG_LEVEL: 'loud', JWT_SECRET: 'short' }).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => /^Invalid configuration: (\w+)=/.exec(l)?.[1]).sort()).toEqual([
      'JWT_SECRET',
      'LOG_LEVEL',
      'PORT',
    ]);
  });

  it('when a secret is rejected, then its value is not echoed in full', () => {
    const secret = 's3cr3t-'.repeat(2);
    expect(configProblems({ JWT_SECRET: secret })).toMatch(/JWT_SECRET/);
    const long = `${'p'.repeat(100)}-tail-marker`;
    expect(configProblems({ ADMIN_USERNAME: 'root', ADMIN_PASSWORD: long })).not.toContain('tail-marker');
  });

  it('when the real server starts with a bad PORT, then it exits non-zero with that line on stderr and creates nothing', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'ferry-cfg-')), 'data');
    try {
      const child = spawn(process.execPath, [compiledEntry('src/server.ts')], {
        cwd: path.resolve(import.meta.dirname, '..'),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: 'abc', DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, stderr).not.toBe(0);
      const ours = stderr.split('\n').filter((l) => l);
      expect(ours).toEqual(['Invalid configuration: PORT="abc": must be an integer between 0 and 65535']);
      expect(stdout).toBe('');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  });
});
