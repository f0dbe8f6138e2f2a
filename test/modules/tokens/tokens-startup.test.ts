import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import {
  createTestApp,
  engines,
  freshPostgresDatabase,
  type Engine,
  type TestApp,
  type TestAppOptions,
} from '../../helpers/app.js';
import { createUser, login } from '../../helpers/factories.js';
import { unless } from '../../helpers/skip.js';

/**
 * What start-up does for identity (SPEC §4): the generated JWT secret in DATA_DIR and the first admin.
 * These tests restart apps on the same data, so they own the data directory and the database.
 */
describe.each(engines)('identity at start-up on %s', (engine: Engine) => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A data directory (and, on PostgreSQL, a database) that survives restarts within one test. */
  async function sharedData(): Promise<Pick<TestAppOptions, 'dataDir' | 'databaseUrl'>> {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-restart-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    if (engine === 'sqlite') return { dataDir };
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    return { dataDir, databaseUrl: db.url };
  }
  async function start(
    data: Pick<TestAppOptions, 'dataDir' | 'databaseUrl'>,
    env: Record<string, string> = {},
  ): Promise<TestApp> {
    const t = await createTestApp(engine, { ...data, env });
    cleanups.push(() => t.close());
    return t;
  }
  const admins = async (t: TestApp) =>
    t.storage.db.selectFrom('users').selectAll().where('role', '=', 'admin').execute();

  it('when JWT_SECRET is unset, then a 32-byte secret is generated into DATA_DIR (0600) and a token survives a restart', async () => {
    const data = await sharedData();
    const first = await start(data, { JWT_SECRET: '' });
    const file = path.join(data.dataDir!, 'jwt-secret');
    const secret = readFileSync(file, 'utf8').trim();
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const u = await createUser(first);
    await first.close();

    const second = await start(data, { JWT_SECRET: '' });
    expect(readFileSync(file, 'utf8').trim()).toBe(secret);
    const res = await second.request({ url: '/api/v1/users/me', token: u.token });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(u.id);
  });

  it('when the restarted app has another secret, then tokens signed with the generated one are refused', async () => {
    const data = await sharedData();
    const first = await start(data, { JWT_SECRET: '' });
    const u = await createUser(first);
    await first.close();
    const second = await start(data, { JWT_SECRET: 'a-completely-different-secret-of-32-bytes!' });
    expect((await second.request({ url: '/api/v1/users/me', token: u.token })).status).toBe(401);
  });

  it('when JWT_SECRET is shorter than 32 bytes, then the configuration is rejected naming it', () => {
    expect(() => loadConfig({ JWT_SECRET: 'x'.repeat(31) })).toThrow(/JWT_SECRET=.*at least 32 bytes/);
    expect(() => loadConfig({ JWT_SECRET: 'é'.repeat(16) })).not.toThrow(); // 32 bytes in UTF-8
  });

  it('when ADMIN_USERNAME/ADMIN_PASSWORD are set, then that admin exists, is active, can log in, and a restart does not duplicate it', async () => {
    const data = await sharedData();
    const env = { ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'root-password-1' };
    const first = await start(data, env);
    const token = await login(first, 'root', 'root-password-1');
    const me = await first.request({ url: '/api/v1/users/me', token });
    expect(me.body).toMatchObject({ username: 'root', role: 'admin', status: 'active' });
    expect((await first.request({ url: '/api/v1/users', token })).status).toBe(200);
    await first.close();

    const second = await start(data, env);
    const rows = await admins(second);
    expect(rows.map((r) => r.id)).toEqual([me.body.id]);
  });

  it('when the configured admin was suspended, then the next start makes it active again', async () => {
    const data = await sharedData();
    const env = { ADMIN_USERNAME: 'boss', ADMIN_PASSWORD: 'boss-password-1' };
    const first = await start(data, env);
    await first.storage.db
      .updateTable('users')
      .set({ status: 'suspended' })
      .where('username_lower', '=', 'boss')
      .execute();
    await first.close();
    const second = await start(data, env);
    const rows = await admins(second);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('active');
  });

  // Several instances are a PostgreSQL deployment (SPEC §11 scale-out); SQLite is the single-instance embedded
  // default, where Kysely's migrator takes no lock (see the report on the tests branch).
  it.runIf(engine === 'postgres')(
    unless(
      engine === 'postgres' ? null : 'PostgreSQL only (two instances on one database)',
      'when two instances start at once on the same database, then there is exactly one admin',
    ),
    async () => {
      const data = await sharedData();
      const env = { ADMIN_USERNAME: 'twin', ADMIN_PASSWORD: 'twin-password-1' };
      const [a, b] = await Promise.all([start(data, env), start(data, env)]);
      for (const t of [a, b]) {
        const rows = await admins(t);
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ username: 'twin', status: 'active' });
      }
      expect(
        (
          await a.request({
            method: 'POST',
            url: '/api/v1/tokens',
            payload: { username: 'twin', password: 'twin-password-1' },
          })
        ).status,
      ).toBe(201);
    },
  );

  it('when ADMIN_USERNAME names an existing ordinary account, then start-up refuses instead of promoting it', async () => {
    const data = await sharedData();
    const first = await start(data);
    const squatter = await createUser(first);
    await first.close();
    await expect(
      createTestApp(engine, { ...data, env: { ADMIN_USERNAME: squatter.username, ADMIN_PASSWORD: 'some-password-1' } }),
    ).rejects.toThrow(/not an admin/);
    const again = await start(data);
    const row = await again.storage.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', squatter.id)
      .executeTakeFirstOrThrow();
    expect(row.role).toBe('user');
  });
});
