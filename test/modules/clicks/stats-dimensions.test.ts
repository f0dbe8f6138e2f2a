import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, TestClock, type TestApp } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, visit } from '../../helpers/factories.js';
import { buildCountryMmdb } from '../../helpers/mmdb.js';
import { createApiKey } from '../api-keys/api-keys.helpers.js';
import { createLink } from '../links/links.helpers.js';
import { UA } from './user-agents.js';

const T0 = Date.parse('2026-03-27T12:00:00.000Z');
const HOUR = 3_600_000;

describe.each(engines)('statistics with bots, devices, referrers, countries and time zones on %s', (engine) => {
  const t = useTestApp(engine, {
    clock: new TestClock(T0),
    // inject's socket address is 127.0.0.1: the one trusted proxy here
    env: { TRUST_PROXY: '127.0.0.1', COUNTRY_HEADER: 'CF-IPCountry', TOKEN_TTL_SECONDS: '2592000' },
  });
  const owner = useUser(t);

  /** A visit through the trusted proxy (X-Forwarded-For names the client), unless `from` says who connects. */
  const visitFrom = async (code: string, ip: string, headers: Record<string, string>, from?: string) => {
    expect((await visit(t, code, { 'x-forwarded-for': ip, ...headers }, from)).status).toBe(302);
  };
  const stats = async (code: string, query = '', token = owner.token) => {
    await t.app.clickQueue.flush();
    const res = await t.request({ url: `/api/v1/links/${code}/stats${query}`, token });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  it('when a Googlebot, a Slackbot and curl visit beside two browsers, then bots are counted apart and never in unique_visitors or the tops', async () => {
    t.clock.ms = T0;
    const link = await createLink(t, {}, owner.token);
    await visitFrom(link.short_code, '198.51.100.1', {
      'user-agent': UA.chromeWindows,
      referer: 'https://news.example/item?id=7',
    });
    await visitFrom(link.short_code, '198.51.100.1', {
      'user-agent': UA.chromeWindows,
      referer: 'https://news.example/other',
    });
    await visitFrom(link.short_code, '198.51.100.2', { 'user-agent': UA.safariIphone });
    await visitFrom(link.short_code, '66.249.66.1', {
      'user-agent': UA.googlebot,
      referer: 'https://bot-referrer.example/',
    });
    await visitFrom(link.short_code, '3.3.3.3', { 'user-agent': UA.slackbot });
    await visitFrom(link.short_code, '4.4.4.4', { 'user-agent': UA.curl });
    await visitFrom(link.short_code, '5.5.5.5', { 'user-agent': 'lightMyRequest' }); // inject's own agent: a script

    const body = await stats(link.short_code, '?interval=hour&from=2026-03-27T12:00:00Z&to=2026-03-27T13:00:00Z');
    expect(body).toMatchObject({ total_clicks: 7, click_count: 7, human_clicks: 3, bot_clicks: 4, unique_visitors: 2 });
    expect(body.timeseries).toEqual([{ start: '2026-03-27T12:00:00.000Z', clicks: 3, bots: 4 }]);
    expect(body.top_browsers).toEqual([
      { value: 'Chrome', clicks: 2 },
      { value: 'Mobile Safari', clicks: 1 },
    ]);
    expect(body.top_os).toEqual([
      { value: 'Windows', clicks: 2 },
      { value: 'iOS', clicks: 1 },
    ]);
    expect(body.top_devices).toEqual([
      { value: 'desktop', clicks: 2 },
      { value: 'mobile', clicks: 1 },
    ]);
    expect(body.top_referrers).toEqual([
      { value: 'https://news.example', clicks: 2 },
      { value: '(direct)', clicks: 1 },
    ]);
    expect(body.top_user_agents).toEqual([
      { value: UA.chromeWindows, clicks: 2 },
      { value: UA.safariIphone, clicks: 1 },
    ]);
    expect(body.top_countries).toEqual([{ value: '(unknown)', clicks: 3 }]);
    expect(Date.parse(body.data_fresh_as_of)).toBeGreaterThanOrEqual(T0);

    // The click records carry what was derived, bots included.
    const records = await t.request({ url: `/api/v1/links/${link.short_code}/clicks?limit=10`, token: owner.token });
    expect(records.status).toBe(200);
    const byUa = new Map(records.body.data.map((r: { user_agent: string | null }) => [r.user_agent, r]));
    expect(byUa.get(UA.safariIphone)).toMatchObject({
      is_bot: false,
      browser: 'Mobile Safari',
      os: 'iOS',
      device: 'mobile',
      country: null,
    });
    expect(byUa.get(UA.googlebot)).toMatchObject({ is_bot: true, device: 'bot' });
    expect(byUa.get(UA.curl)).toMatchObject({ is_bot: true, device: 'bot' });
    expect(byUa.get('lightMyRequest')).toMatchObject({ is_bot: true, device: 'bot' });
  });

  it('when visits carry a country header, then it counts only when the request came through the trusted proxy', async () => {
    const link = await createLink(t, {}, owner.token);
    const human = { 'user-agent': UA.chromeWindows };
    await visitFrom(link.short_code, '198.51.100.10', { ...human, 'cf-ipcountry': 'DE' });
    await visitFrom(link.short_code, '198.51.100.11', { ...human, 'cf-ipcountry': 'de' });
    await visitFrom(link.short_code, '198.51.100.12', { ...human, 'cf-ipcountry': 'FR' });
    await visitFrom(link.short_code, '198.51.100.13', { ...human, 'cf-ipcountry': 'XX' }); // Cloudflare: unknown
    // Straight from a client that is no trusted proxy: its header is not believed.
    await visitFrom(link.short_code, '198.51.100.14', { ...human, 'cf-ipcountry': 'US' }, '203.0.113.50');
    await visitFrom(link.short_code, '198.51.100.15', { 'user-agent': UA.googlebot, 'cf-ipcountry': 'US' });
    const body = await stats(link.short_code);
    expect(body.top_countries).toEqual([
      { value: '(unknown)', clicks: 2 },
      { value: 'DE', clicks: 2 },
      { value: 'FR', clicks: 1 },
    ]);
    const records = await t.storage.db
      .selectFrom('clicks')
      .select(['ip', 'country'])
      .where('link_id', '=', link.id)
      .orderBy('id')
      .execute();
    expect(records.map((r) => r.country)).toEqual(['DE', 'DE', 'FR', null, null, 'US']);
    expect(records[4]!.ip).toBe('203.0.113.50'); // the untrusted client's forwarded address was not believed either
  });

  it('when a day has a daylight-saving change, then tz day buckets start at local midnight and are 23 or 25 hours long', async () => {
    t.clock.ms = Date.parse('2026-03-28T12:00:00.000Z');
    const link = await createLink(t, {}, owner.token);
    const at = async (iso: string, ua = UA.chromeWindows) => {
      t.clock.ms = Date.parse(iso);
      await visitFrom(link.short_code, '198.51.100.20', { 'user-agent': ua });
    };
    await at('2026-03-28T22:59:00.000Z'); // 23:59 CET, Saturday 28
    await at('2026-03-28T23:00:00.000Z'); // 00:00 CET, Sunday 29 (clocks go forward at 02:00)
    await at('2026-03-29T21:59:00.000Z'); // 23:59 CEST, Sunday 29
    await at('2026-03-29T22:00:00.000Z', UA.slackbot); // 00:00 CEST, Monday 30
    t.clock.ms = Date.parse('2026-03-30T12:00:00.000Z');
    const berlin = await stats(
      link.short_code,
      '?tz=Europe/Berlin&from=2026-03-28T00:00:00%2B01:00&to=2026-03-30T12:00:00Z',
    );
    expect(berlin).toMatchObject({
      tz: 'Europe/Berlin',
      from: '2026-03-27T23:00:00.000Z',
      to: '2026-03-30T22:00:00.000Z',
      interval: 'day',
    });
    expect(berlin.timeseries).toEqual([
      { start: '2026-03-27T23:00:00.000Z', clicks: 1, bots: 0 },
      { start: '2026-03-28T23:00:00.000Z', clicks: 2, bots: 0 }, // 23 hours long
      { start: '2026-03-29T22:00:00.000Z', clicks: 0, bots: 1 },
    ]);
    const utc = await stats(link.short_code, '?from=2026-03-28T00:00:00Z&to=2026-03-30T12:00:00Z');
    expect(utc.tz).toBe('UTC');
    expect(utc.timeseries).toEqual([
      { start: '2026-03-28T00:00:00.000Z', clicks: 2, bots: 0 },
      { start: '2026-03-29T00:00:00.000Z', clicks: 1, bots: 1 },
      { start: '2026-03-30T00:00:00.000Z', clicks: 0, bots: 0 },
    ]);
    // Autumn: 25 hours from local midnight to local midnight in New York's zone too.
    const autumn = await stats(
      link.short_code,
      '?tz=America/New_York&from=2026-10-31T12:00:00Z&to=2026-11-03T00:00:00Z',
    );
    const starts = autumn.timeseries.map((b: { start: string }) => Date.parse(b.start));
    expect(autumn.timeseries.map((b: { start: string }) => b.start)).toEqual([
      '2026-10-31T04:00:00.000Z',
      '2026-11-01T04:00:00.000Z',
      '2026-11-02T05:00:00.000Z',
    ]);
    expect(starts[2] - starts[1]).toBe(25 * HOUR);
  });

  it.each([['Mars/Olympus_Mons'], ['Europe/Nowhere'], ['../etc']])(
    'when tz is %s, then 400 VALIDATION_ERROR naming tz',
    async (tz) => {
      const link = await createLink(t, {}, owner.token);
      const res = await t.request({
        url: `/api/v1/links/${link.short_code}/stats?tz=${encodeURIComponent(tz)}`,
        token: owner.token,
      });
      expectEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('tz');
    },
  );

  it("when a user has several links, then GET /users/{id}/stats sums them, lists top_links, and is the user's or an admin's only", async () => {
    t.clock.ms = Date.parse('2026-04-02T10:00:00.000Z');
    const user = await createUser(t);
    const a = await createLink(t, {}, user.token);
    const b = await createLink(t, {}, user.token);
    const gone = await createLink(t, {}, user.token);
    for (let i = 0; i < 3; i += 1)
      await visitFrom(a.short_code, `198.51.100.${30 + i}`, {
        'user-agent': UA.chromeWindows,
        referer: 'https://news.example/',
      });
    await visitFrom(b.short_code, '198.51.100.30', { 'user-agent': UA.safariIphone });
    await visitFrom(b.short_code, '198.51.100.40', { 'user-agent': UA.googlebot });
    for (let i = 0; i < 5; i += 1)
      await visitFrom(gone.short_code, '198.51.100.50', { 'user-agent': UA.chromeWindows });
    await t.app.clickQueue.flush();
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/links/${gone.short_code}`, token: user.token })).status,
    ).toBe(204);

    const res = await t.request({
      url: '/api/v1/users/me/stats?interval=hour&from=2026-04-02T10:00:00Z&to=2026-04-02T11:00:00Z',
      token: user.token,
    });
    expect(res.status, res.text).toBe(200);
    // The deleted link's clicks stay in the account's lifetime figures, as in its series: all time >= this period.
    expect(res.body).toMatchObject({
      user_id: user.id,
      links: 2,
      total_clicks: 10,
      human_clicks: 9,
      bot_clicks: 1,
      unique_visitors: 4,
    });
    expect(res.body.top_links).toEqual([
      { short_code: a.short_code, clicks: 3 },
      { short_code: b.short_code, clicks: 1 },
    ]);
    expect(res.body.top_browsers).toEqual([
      { value: 'Chrome', clicks: 8 },
      { value: 'Mobile Safari', clicks: 1 },
    ]);
    expect(res.body.top_referrers).toEqual([
      { value: '(direct)', clicks: 6 },
      { value: 'https://news.example', clicks: 3 },
    ]);
    expect(res.body.timeseries).toEqual([{ start: '2026-04-02T10:00:00.000Z', clicks: 9, bots: 1 }]);

    const v2 = await t.request({
      url: `/api/v2/users/${user.id}/stats?interval=hour&from=2026-04-02T10:00:00Z&to=2026-04-02T11:00:00Z`,
      token: user.token,
    });
    expect(v2.status).toBe(200);
    expect(v2.body).toMatchObject({ userId: user.id, totalClicks: 10, humanClicks: 9, botClicks: 1 });
    expect(v2.body.topLinks[0]).toEqual({ shortCode: a.short_code, clicks: 3 });
    const linkV2 = await t.request({ url: `/api/v2/links/${a.short_code}/stats`, token: user.token });
    expect(Object.keys(linkV2.body)).toEqual(
      expect.arrayContaining([
        'humanClicks',
        'botClicks',
        'topBrowsers',
        'topOs',
        'topDevices',
        'topCountries',
        'dataFreshAsOf',
        'tz',
      ]),
    );

    const other = await createUser(t);
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    expectEnvelope(await t.request({ url: `/api/v1/users/${user.id}/stats`, token: other.token }), 403, 'FORBIDDEN');
    expectEnvelope(await t.request({ url: `/api/v1/users/${user.id}/stats` }), 401, 'UNAUTHENTICATED');
    expect((await t.request({ url: `/api/v1/users/${user.id}/stats`, token: admin.token })).status).toBe(200);
    expectEnvelope(await t.request({ url: '/api/v1/users/999999999/stats', token: admin.token }), 404, 'NOT_FOUND');

    const statsKey = await createApiKey(t, user, ['stats:read']);
    const linksKey = await createApiKey(t, user, ['links:read']);
    expect((await t.request({ url: '/api/v1/users/me/stats', token: statsKey.key })).status).toBe(200);
    expectEnvelope(await t.request({ url: '/api/v1/users/me/stats', token: linksKey.key }), 403, 'INSUFFICIENT_SCOPE');
  });
});

describe.each(engines)('IP_ANONYMIZE on %s', (engine) => {
  const t = useTestApp(engine, { clock: new TestClock(T0), env: { TRUST_PROXY: 'true', IP_ANONYMIZE: 'true' } });

  it('when addresses are anonymized, then records keep IPv4 /24 and IPv6 /48, and unique visitors come from a daily hash of the full address', async () => {
    const link = await createLink(t);
    const go = async (ip: string) => {
      const res = await t.app.inject({
        url: `/${link.short_code}`,
        headers: { 'x-forwarded-for': ip, 'user-agent': UA.chromeWindows },
      });
      expect(res.statusCode).toBe(302);
    };
    await go('203.0.113.77');
    await go('203.0.113.78'); // same /24, another person
    await go('203.0.113.77'); // the same person again
    await go('2001:db8:85a3:1:2:3:4:5');
    t.clock.advance(24 * HOUR);
    await go('203.0.113.77'); // the next day: a new daily hash
    await t.app.clickQueue.flush();
    const records = await t.storage.db
      .selectFrom('clicks')
      .select('ip')
      .where('link_id', '=', link.id)
      .orderBy('id')
      .execute();
    expect(records.map((r) => r.ip)).toEqual([
      '203.0.113.0',
      '203.0.113.0',
      '203.0.113.0',
      '2001:db8:85a3::',
      '203.0.113.0',
    ]);
    const stored = await t.storage.db.selectFrom('link_visitors').select('ip').where('link_id', '=', link.id).execute();
    expect(stored.every((r) => r.ip.startsWith('h:') && !r.ip.includes('203.0.113'))).toBe(true);
    const body = (await t.request({ url: `/api/v1/links/${link.short_code}/stats` })).body;
    expect(body).toMatchObject({ total_clicks: 5, human_clicks: 5, unique_visitors: 4 });
  });
});

describe.each(engines)('GEOIP_DATABASE on %s', (engine) => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-geoip-'));
    const file = path.join(dir, 'countries.mmdb');
    writeFileSync(
      file,
      buildCountryMmdb([
        ['203.0.113.0/24', 'NL'],
        ['198.51.100.0/24', 'JP'],
      ]),
    );
    t = await createTestApp(engine, {
      clock: new TestClock(T0),
      env: { TRUST_PROXY: '127.0.0.1', COUNTRY_HEADER: 'CF-IPCountry', GEOIP_DATABASE: file },
    });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when no trusted header names the country, then the offline database does; a trusted header wins', async () => {
    const link = await createLink(t);
    const go = async (ip: string, headers: Record<string, string> = {}) => {
      const res = await t.app.inject({
        url: `/${link.short_code}`,
        headers: { 'x-forwarded-for': ip, 'user-agent': UA.chromeWindows, ...headers },
      });
      expect(res.statusCode).toBe(302);
    };
    await go('203.0.113.9');
    await go('198.51.100.1');
    await go('198.51.100.2', { 'cf-ipcountry': 'BR' });
    await go('192.0.2.1'); // in no network of the database
    await t.app.clickQueue.flush();
    const records = await t.storage.db
      .selectFrom('clicks')
      .select('country')
      .where('link_id', '=', link.id)
      .orderBy('id')
      .execute();
    expect(records.map((r) => r.country)).toEqual(['NL', 'JP', 'BR', null]);
  });

  it('when GEOIP_DATABASE is not a database, then the app refuses to start, naming the variable, with nothing left running', async () => {
    const bad = path.join(dir, 'not.mmdb');
    writeFileSync(bad, 'not a database');
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-geoip-data-'));
    try {
      await expect(createTestApp(engine, { dataDir, env: { GEOIP_DATABASE: bad } })).rejects.toThrow(/GEOIP_DATABASE/);
      // The file is read before the click ingest starts: a writer thread left behind by a failed start kept writing
      // its journal into DATA_DIR (a removal of the directory then failed with ENOTEMPTY).
      expect(existsSync(path.join(dataDir, 'click-journal'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
