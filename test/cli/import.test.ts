import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../helpers/app.js';
import { cliEnvFor, runFerry } from '../helpers/cli.js';
import { createUser } from '../helpers/factories.js';
import { createMysqlDatabase, type TestMysqlDatabase } from '../helpers/mysql.js';
import { waitFor } from '../helpers/scale-out.js';
import { missing, unless } from '../helpers/skip.js';
import { seedYourls } from '../modules/imports/fixtures/yourls-schema.js';

const fixture = (name: string) => fileURLToPath(new URL(`../modules/imports/fixtures/${name}`, import.meta.url));

/** `ferry import` as an operator runs it: a real process on the storage a running app uses, seen through the API. */
describe.each(engines)('ferry import on %s', (engine) => {
  let t: TestApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(engine);
    env = cliEnvFor(t);
    await createUser(t, { role: 'admin', status: 'active' });
  });
  afterAll(() => t.close());

  it('when a generic CSV is imported as a dry run and then for real, then only the second writes, and a third changes nothing', async () => {
    const dry = await runFerry(['import', 'csv', '--file', fixture('generic.csv'), '--dry-run', '--json'], env);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.json()).toMatchObject({ state: 'done', dry_run: true, items: 3, created: 3, failed: 0 });
    expect((await t.request({ url: '/api/v1/links/gen1' })).status).toBe(404);
    const real = await runFerry(['import', 'csv', '--file', fixture('generic.csv')], env);
    expect(real.status, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/3 items, 3 created/);
    expect((await t.request({ url: '/very-long-code-from-elsewhere' })).headers.location).toBe('https://example.com/c');
    const again = await runFerry(['import', 'csv', '--file', fixture('generic.csv'), '--json'], env);
    expect(again.json()).toMatchObject({ created: 0, unchanged: 3 });
  });

  it('when ferry import runs beside the server, then a code the server cached as missing redirects once the import has committed', async () => {
    const code = `bs${Math.random().toString(36).slice(2, 8)}`;
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'ferry-import-')), 'links.csv');
    writeFileSync(file, `url,code\nhttps://example.com/beside-the-server,${code}\n`);
    // The miss is cached; the test clock stands still, so it would never expire by itself.
    expect((await t.request({ url: `/${code}` })).status).toBe(404);
    const run = await runFerry(['import', 'csv', '--file', file], env);
    expect(run.status, run.stderr).toBe(0);
    // The server reads the CLI's announcement every 250 ms (infra/sqlite-link-change-feed.ts; PostgreSQL: NOTIFY).
    await waitFor(`/${code} to redirect`, async () => (await t.request({ url: `/${code}` })).status === 302, 5_000);
  });

  it('when the source is unknown, then exit 2 with the choices', async () => {
    const bad = await runFerry(['import', 'nowhere'], env);
    expect(bad.status).toBe(2);
  });

  describe.skipIf(missing.mysql !== null)(unless(missing.mysql, 'from YOURLS on MariaDB'), () => {
    let db: TestMysqlDatabase;
    beforeAll(async () => {
      db = await createMysqlDatabase(process.env.TEST_MYSQL_URL!);
      await seedYourls(db, 'cli_');
    });
    afterAll(async () => db?.drop());

    it('when YOURLS is imported, then its keywords redirect and their click log is in the statistics', async () => {
      const run = await runFerry(['import', 'yourls', '--database', db.url, '--table-prefix', 'cli_', '--json'], env);
      expect(run.status, run.stderr).toBe(0);
      expect(run.json()).toMatchObject({ items: 4, created: 4, failed: 0, visits: 4 });
      // A keyword that does not fit short_code is an alias of a generated code: its old short URL still works.
      expect((await t.request({ url: '/my-long-keyword-2020' })).headers.location).toBe('https://example.com/long');
      const stats = await t.request({ url: '/api/v1/links/abc/stats?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z', token: (await createUser(t, { role: 'admin', status: 'active' })).token });
      expect(stats.body).toMatchObject({ total_clicks: 3 });
    });
  });
});
