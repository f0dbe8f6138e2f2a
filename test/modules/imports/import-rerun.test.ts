import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../helpers/app.js';
import { createUser, type CreatedUser } from '../../helpers/factories.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createMysqlDatabase, type TestMysqlDatabase } from '../../helpers/mysql.js';
import { missing } from '../../helpers/skip.js';
import { useSourceStub } from '../../helpers/source-stub.js';
import { KUTT_API_KEY, kuttLinks, kuttPage } from './fixtures/kutt.js';
import { SHLINK_API_KEY, shlinkPage, shlinkShortUrls, shlinkVisits, shlinkVisitsPage } from './fixtures/shlink.js';
import { seedYourls } from './fixtures/yourls-schema.js';
import { finishedJob, itemOf, type ImportJob } from './imports.helpers.js';

/**
 * docs/migrating.md says to import again just before the switch: a re-run brings every visit the source gained
 * since the last run, exactly once (by the source's own visit identity), and says how many each link got.
 */
describe.each(engines)('a second import on %s', (engine) => {
  const visits: Record<string, unknown[]> = structuredClone(shlinkVisits);
  const counts = kuttLinks.map((l) => ({ ...l }));
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });
  const shlink = useSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, (path, q) => {
    if (path === '/rest/v3/short-urls') return shlinkPage('shortUrls', shlinkShortUrls, Number(q.get('page') ?? 1), 10);
    const m = /^\/rest\/v3\/short-urls\/([^/]+)\/visits$/.exec(path);
    return m ? shlinkVisitsPage(visits[decodeURIComponent(m[1]!)] ?? [], q) : null;
  });
  const kutt = useSourceStub({ header: 'X-API-KEY', value: KUTT_API_KEY }, (path, q) =>
    path === '/api/v2/links' ? kuttPage(counts, Number(q.get('skip') ?? 0), 50) : null,
  );
  const run = async (payload: Record<string, unknown>): Promise<ImportJob> =>
    finishedJob(
      t,
      await t.request({ method: 'POST', url: '/api/v1/imports', token: admin.token, payload }),
      admin.token,
    );
  /** The link's click records, as the export of its clicks counts them (imported ones included). */
  const totalClicks = async (code: string) =>
    (
      await t.storage.db
        .selectFrom('clicks')
        .select('id')
        .where('short_code', '=', code)
        .where('imported', '=', 1)
        .execute()
    ).length;

  it('when Shlink gained visits since the last import, then the next one brings exactly those, the same second included', async () => {
    const shlinkRun = () => run({ source: 'shlink', url: shlink.url, api_key: SHLINK_API_KEY });
    expect((await shlinkRun()).progress).toMatchObject({ created: 3, visits: 4 });
    expect(await totalClicks('12C18')).toBe(3);
    // Read once, so that the server remembers the sums of these closed days.
    const august = async () => {
      const res = await t.request({
        url: '/api/v1/links/12C18/stats?from=2015-08-01T00:00:00Z&to=2015-09-01T00:00:00Z',
        token: admin.token,
      });
      return (res.body.timeseries as Array<{ clicks: number; bots: number }>).reduce(
        (n, b) => n + b.clicks + b.bots,
        0,
      );
    };
    expect(await august()).toBe(3);
    // Two new visits, one at the very second of the last one imported (a tie the mark must tell apart).
    const last = (visits['12C18']![2] as { date: string }).date;
    const fresh = { ...(visits['12C18']![0] as object), referer: 'https://new.example/' };
    visits['12C18']!.push({ ...fresh, date: last }, { ...fresh, date: '2025-03-01T10:00:00+00:00' });
    const second = await shlinkRun();
    expect(second.progress).toMatchObject({ created: 0, unchanged: 3, visits: 2 });
    expect(itemOf(second, '/12C18')).toMatchObject({ outcome: 'unchanged', visits: 2 });
    expect(await totalClicks('12C18')).toBe(5);
    expect(await august()).toBe(4);
    const referrers = await t.storage.db
      .selectFrom('clicks')
      .select('referrer')
      .where('short_code', '=', '12C18')
      .execute();
    expect(referrers.filter((r) => r.referrer === 'https://new.example/')).toHaveLength(2);
    const third = await shlinkRun();
    expect(third.progress).toMatchObject({ unchanged: 3, visits: 0 });
    expect(await totalClicks('12C18')).toBe(5);
  });

  it("when Kutt's visit counts grew since the last import, then each link's click count grows by as much", async () => {
    const kuttRun = () =>
      run({
        source: 'kutt',
        url: kutt.url,
        api_key: KUTT_API_KEY,
        domain_map: { 'l.example.org': 'kuttrerun.example' },
      });
    expect((await kuttRun()).progress).toMatchObject({ created: 3 });
    counts[0]!.visit_count = 50;
    const second = await kuttRun();
    expect(itemOf(second, '/abc123')).toMatchObject({ outcome: 'unchanged', visits: 8 });
    expect((await t.request({ url: '/api/v1/links/abc123', token: admin.token })).body.click_count).toBe(50);
    await kuttRun();
    expect((await t.request({ url: '/api/v1/links/abc123', token: admin.token })).body.click_count).toBe(50);
  });
});

describe.each(engines)('a second YOURLS import on %s', (engine) => {
  let t: TestApp;
  let admin: CreatedUser;
  let db: TestMysqlDatabase | undefined;
  beforeAll(async () => {
    if (missing.mysql !== null) return;
    t = await createTestApp(engine);
    admin = await createUser(t, { role: 'admin', status: 'active' });
    db = await createMysqlDatabase(process.env.TEST_MYSQL_URL!);
    await seedYourls(db, 'rr_');
  });
  afterAll(async () => {
    await db?.drop();
    await t?.close();
  });

  it.skipIf(missing.mysql !== null)(
    'when YOURLS logged new clicks since the last import, then the next one brings those (by click_id) and no other',
    async () => {
      const yourlsRun = async () =>
        finishedJob(
          t,
          await t.request({
            method: 'POST',
            url: '/api/v1/imports',
            token: admin.token,
            payload: { source: 'yourls', database: db!.url, table_prefix: 'rr_' },
          }),
          admin.token,
        );
      // A keyword whose target Ferry refuses in the first run, with a click logged then.
      await db!.query(
        "INSERT INTO `rr_url` (keyword, url, title, timestamp, ip, clicks) VALUES ('late', 'javascript:alert(1)', NULL, '2020-01-01 00:00:00', '127.0.0.1', 1)",
      );
      await db!.query(
        "INSERT INTO `rr_log` (click_time, shorturl, referrer, user_agent, ip_address, country_code) VALUES ('2020-01-09 00:00:00', 'late', 'direct', 'Mozilla/5.0', '198.51.100.8', 'FR')",
      );
      const first = await yourlsRun();
      expect(first.progress).toMatchObject({ created: 4, failed: 1, visits: 4 });
      await db!.query(
        "INSERT INTO `rr_log` (click_time, shorturl, referrer, user_agent, ip_address, country_code) VALUES ('2020-03-01 00:00:00', 'abc', 'direct', 'Mozilla/5.0', '198.51.100.7', 'NL')",
      );
      await db!.query('UPDATE `rr_url` SET clicks = clicks + 1 WHERE keyword = ?', ['abc']);
      // Fixed in the source: the next run brings the link with its click from before the first run.
      await db!.query("UPDATE `rr_url` SET url = 'https://example.com/late' WHERE keyword = 'late'");
      const second = await yourlsRun();
      expect(second.progress).toMatchObject({ created: 1, unchanged: 4, visits: 2 });
      expect(itemOf(second, '/abc')).toMatchObject({ visits: 1 });
      expect((await t.request({ url: '/api/v1/links/late', token: admin.token })).body).toMatchObject({
        original_url: 'https://example.com/late',
        click_count: 1,
      });
      const link = await t.request({ url: '/api/v1/links/abc', token: admin.token });
      expect(link.body.click_count).toBe(4);
      const third = await yourlsRun();
      expect(third.progress).toMatchObject({ created: 0, unchanged: 5, visits: 0 });
    },
  );
});
