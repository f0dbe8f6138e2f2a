import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { cliEnvFor, runFerry } from '../helpers/cli.js';
import { createUser } from '../helpers/factories.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { createMysqlDatabase, type TestMysqlDatabase } from '../helpers/mysql.js';
import { waitFor } from '../helpers/scale-out.js';
import { missing, unless } from '../helpers/skip.js';
import { useSourceStub } from '../helpers/source-stub.js';
import { BITLY_GROUP, BITLY_TOKEN, bitlyLinks, bitlyPage } from '../modules/imports/fixtures/bitly.js';
import { KUTT_API_KEY, kuttLinks, kuttPage } from '../modules/imports/fixtures/kutt.js';
import {
  SHLINK_API_KEY,
  shlinkPage,
  shlinkShortUrls,
  shlinkVisits,
  shlinkVisitsPage,
} from '../modules/imports/fixtures/shlink.js';
import { seedYourls } from '../modules/imports/fixtures/yourls-schema.js';

const fixture = (name: string) => fileURLToPath(new URL(`../modules/imports/fixtures/${name}`, import.meta.url));

/** `ferry import` as an operator runs it (in this process) on the storage a running app uses, seen through the API. */
describe.each(engines)('ferry import on %s', (engine) => {
  const t = useTestApp(engine);
  let env: Record<string, string>;
  beforeAll(() => {
    env = cliEnvFor(t);
  });
  const admin = useUser(t, { role: 'admin', status: 'active' });
  const shlink = useSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, (p, q) => {
    if (p === '/rest/v3/short-urls')
      return shlinkPage('shortUrls', shlinkShortUrls, Number(q.get('page') ?? 1), Number(q.get('itemsPerPage') ?? 10));
    const m = /^\/rest\/v3\/short-urls\/([^/]+)\/visits$/.exec(p);
    return m ? shlinkVisitsPage(shlinkVisits[decodeURIComponent(m[1]!)] ?? [], q) : null;
  });
  const kutt = useSourceStub({ header: 'X-API-KEY', value: KUTT_API_KEY }, (p, q) =>
    p === '/api/v2/links' ? kuttPage(kuttLinks, Number(q.get('skip') ?? 0), Number(q.get('limit') ?? 10)) : null,
  );
  const bitly = useSourceStub({ header: 'Authorization', value: `Bearer ${BITLY_TOKEN}` }, (p, q) =>
    p === `/v4/groups/${BITLY_GROUP}/bitlinks` ? bitlyPage(bitly.url, bitlyLinks, Number(q.get('page') ?? 1), 1) : null,
  );
  const link = (code: string, domain?: string) =>
    t.request({ url: `/api/v1/links/${code}${domain ? `?domain=${domain}` : ''}`, token: admin.token });

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
    // The server reads the CLI's event in the outbox every 250 ms (infra/outbox-feed.ts; PostgreSQL: woken by NOTIFY).
    await waitFor(`/${code} to redirect`, async () => (await t.request({ url: `/${code}` })).status === 302, 5_000);
  });

  it('when the source is unknown, then exit 2 with the choices', async () => {
    const bad = await runFerry(['import', 'nowhere'], env);
    expect(bad.status).toBe(2);
  });

  it('when Shlink is imported with a domain map, then its slug on the mapped domain redirects as an alias, visits in the statistics', async () => {
    const run = await runFerry(
      [
        'import',
        'shlink',
        '--url',
        shlink.url,
        '--api-key',
        SHLINK_API_KEY,
        '--domain-map',
        'go.example.com=default',
        '--json',
      ],
      env,
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ state: 'done', items: 3, created: 3, failed: 0, visits: 4 });
    expect((await link('12C18')).body).toMatchObject({
      title: 'Welcome to Steam',
      max_visits: 100,
      forward_query: true,
      click_count: 3,
    });
    await waitFor(
      '/summer-sale-2024 to redirect',
      async () =>
        (await t.request({ url: '/summer-sale-2024' })).headers.location === 'https://shop.example.com/sale?x=1',
      5_000,
    );
  });

  it('when Kutt is imported, then a link on its custom domain lands there and the password it cannot bring is said per item', async () => {
    const run = await runFerry(['import', 'kutt', '--url', kutt.url, '--api-key', KUTT_API_KEY], env);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/3 items, 3 created/);
    expect(run.stdout).toMatch(
      /created \/launch-day \(as [0-9a-zA-Z]{8}\): .*password: Kutt's password hash cannot be read by Ferry/,
    );
    expect((await link('promo', 'l.example.org')).body).toMatchObject({
      domain: 'l.example.org',
      original_url: 'https://example.org/promo',
    });
    expect((await link('abc123')).body).toMatchObject({ click_count: 42, title: 'Our docs' });
  });

  it('when Bitly (CSV export, then API v4) and Dub are imported, then the second Bitly source meets the first: --on-conflict fail is exit 1', async () => {
    const csv = await runFerry(['import', 'bitly', '--file', fixture('bitly-export.csv'), '--json'], env);
    expect(csv.status, csv.stderr).toBe(0);
    expect(csv.json()).toMatchObject({ items: 2, created: 2 });
    expect((await link('3xYzAbc')).body).toMatchObject({
      original_url: 'https://example.com/spring',
      aliases: ['spring-2022'],
      tags: ['seasonal', 'promo'],
    });
    const api = [
      'import',
      'bitly',
      '--url',
      `${bitly.url}/v4/groups/${BITLY_GROUP}`,
      '--api-key',
      BITLY_TOKEN,
      '--json',
    ];
    const dry = await runFerry([...api, '--dry-run'], env);
    expect(dry.json()).toMatchObject({ dry_run: true, conflicts: 2 });
    const fail = await runFerry([...api, '--on-conflict', 'fail'], env);
    expect(fail.status).toBe(1);
    expect(fail.json()).toMatchObject({ state: 'failed', conflicts: 2, created: 0 });
    expect(fail.stderr).toMatch(/conflict on \S*\/3xYzAbc \(--on-conflict fail\)/);
    const dub = await runFerry(['import', 'dub', '--file', fixture('dub-export.csv'), '--json'], env);
    expect(dub.status, dub.stderr).toBe(0);
    expect(dub.json()).toMatchObject({ items: 2, created: 2 });
    expect((await link('summer')).body).toMatchObject({ click_count: 12, domain: null });
    expect(
      (
        await link(
          dub.json().problems.find((p: { source_ref: string }) => p.source_ref.startsWith('go.brand.example'))
            ?.short_code ?? 'x',
          'go.brand.example',
        )
      ).body,
    ).toMatchObject({ domain: 'go.brand.example', aliases: ['docs-v2'] });
  });

  it('when the usage is wrong, then exit 2 and nothing is imported: a bad --domain-map, a source without its address', async () => {
    expect(
      (await runFerry(['import', 'csv', '--file', fixture('generic.csv'), '--domain-map', 'nope'], env)).status,
    ).toBe(2);
    const noUrl = await runFerry(['import', 'shlink', '--api-key', 'x', '--json'], env);
    expect(noUrl.status).toBe(2);
    expect(noUrl.stderr).toMatch(/shlink needs a url/);
  });

  it('when some items fail, then the import keeps the others, prints the counts and exits 1', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'ferry-import-failed-')), 'links.csv');
    writeFileSync(file, 'url,code\nhttps://example.com/kept,keptok1\nnot a url,brokn1\njavascript:alert(1),brokn2\n');
    const run = await runFerry(['import', 'csv', '--file', file], env);
    expect(run.status, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/: 3 items, 1 created, 0 unchanged, 0 conflicts, 2 failed, 0 visits;/);
    expect(run.stderr).toMatch(/2 of 3 items failed/);
    expect((await t.request({ url: '/keptok1' })).status).toBe(302);
    const json = await runFerry(['import', 'csv', '--file', file, '--json'], env);
    expect(json.status).toBe(1);
    expect(json.json()).toMatchObject({ state: 'done', items: 3, unchanged: 1, failed: 2 });
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
      const stats = await t.request({
        url: '/api/v1/links/abc/stats?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z',
        token: (await createUser(t, { role: 'admin', status: 'active' })).token,
      });
      expect(stats.body).toMatchObject({ total_clicks: 3 });
    });
  });
});
