import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useUser } from '../../helpers/fixtures.js';
import { createLink, createUser, login, visit, type CreatedLink, type CreatedUser } from '../../helpers/factories.js';
import {
  domainTestApp,
  verifiedDomain,
  type CreatedDomain,
  type DomainTestApp,
  useDomainTestApp,
} from './domains.helpers.js';

const DEFAULT_HOST = 'fry.example';

/** SPEC §19 "Keys and statistics": click records keep the domain; lists, stats and exports filter by it; limited keys see their domains only. */
describe.each(engines)('statistics, exports and lists by domain on %s', (engine) => {
  let a: CreatedDomain;
  let b: CreatedDomain;
  let onA: CreatedLink;
  let onB: CreatedLink;
  let onDefault: CreatedLink;
  const d = useDomainTestApp(engine);
  const owner = useUser(d, { status: 'active' });
  const admin = useUser(d, { role: 'admin', status: 'active' });
  beforeAll(async () => {
    a = await verifiedDomain(d, owner.token);
    b = await verifiedDomain(d, owner.token);
    onA = await createLink(d.t, { domain: a.hostname }, owner.token);
    onB = await createLink(d.t, { domain: b.hostname }, owner.token);
    onDefault = await createLink(d.t, {}, owner.token);
    for (const [link, host, times] of [
      [onA, a.hostname, 2],
      [onB, b.hostname, 1],
      [onDefault, DEFAULT_HOST, 1],
    ] as const) {
      for (let i = 0; i < times; i += 1) expect((await visit(d.t, link.short_code, { host })).status).toBe(302);
    }
    await d.t.app.clickQueue.flush();
  });

  const get = (url: string, token: string, headers: Record<string, string> = {}) =>
    d.t.request({ url, token, headers });
  const codes = (body: { data: Array<{ short_code: string }> }) => body.data.map((l) => l.short_code).sort();
  const keyFor = async (user: CreatedUser, domains: number[]): Promise<string> => {
    const res = await d.t.request({
      method: 'POST',
      url: `/api/v1/users/${user.id}/api-keys`,
      token: user.token,
      payload: { name: 'one domain', scopes: ['links:read', 'stats:read'], domains },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.key as string;
  };

  it("when a link on a domain is visited, then its click records (JSON, v2 and CSV) carry the domain; the default domain's carry null", async () => {
    const json = await get(`/api/v1/links/${onA.short_code}/clicks?domain=${a.hostname}`, owner.token);
    expect(json.status, json.text).toBe(200);
    expect(json.body.data.map((c: { domain: string | null }) => c.domain)).toEqual([a.hostname, a.hostname]);
    const v2 = await get(`/api/v2/links/${onA.short_code}/clicks?domain=${a.hostname}`, owner.token);
    expect(v2.body.data[0].domain).toBe(a.hostname);
    const csv = await get(`/api/v1/links/${onA.short_code}/clicks?domain=${a.hostname}`, owner.token, {
      accept: 'text/csv',
    });
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]!.split(',').at(-1)).toBe('domain');
    expect(lines.slice(1).map((l) => l.split(',').at(-1))).toEqual([a.hostname, a.hostname]);
    const plain = await get(`/api/v1/links/${onDefault.short_code}/clicks`, owner.token);
    expect(plain.body.data.map((c: { domain: string | null }) => c.domain)).toEqual([null]);
  });

  it("when the user's list and the admin's list name a domain, then only its links", async () => {
    expect(codes((await get(`/api/v1/users/me/links?domain=${a.hostname}`, owner.token)).body)).toEqual([
      onA.short_code,
    ]);
    const all = await get(`/api/v1/links?domain=${a.hostname}&limit=100`, admin.token);
    expect(all.status, all.text).toBe(200);
    expect(codes(all.body)).toEqual([onA.short_code]);
    const byDefault = await get(`/api/v1/links?domain=${DEFAULT_HOST}&user_id=${owner.id}`, admin.token);
    expect(codes(byDefault.body)).toEqual([onDefault.short_code]);
    expect((await get('/api/v1/links?domain=nowhere.example.test', admin.token)).body.data).toEqual([]);
  });

  it("when the user's statistics name a domain, then they count its links only", async () => {
    const whole = await get('/api/v1/users/me/stats', owner.token);
    expect(whole.body).toMatchObject({ links: 3, total_clicks: 4 });
    const res = await get(`/api/v1/users/me/stats?domain=${a.hostname}`, owner.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      links: 1,
      total_clicks: 2,
      human_clicks: 2,
      top_links: [{ short_code: onA.short_code, clicks: 2 }],
    });
    expect(res.body.timeseries.reduce((n: number, s: { clicks: number }) => n + s.clicks, 0)).toBe(2);
    expect(res.body.top_devices).toEqual([{ value: 'desktop', clicks: 2 }]);
    const byDefault = await get(`/api/v1/users/me/stats?domain=${DEFAULT_HOST}`, owner.token);
    expect(byDefault.body).toMatchObject({
      links: 1,
      total_clicks: 1,
      top_links: [{ short_code: onDefault.short_code, clicks: 1 }],
    });
  });

  it('when a key is limited to a domain, then its statistics, lists and exports cover that domain only; another is 403', async () => {
    const key = await keyFor(owner, [a.id]);
    expect((await get('/api/v1/users/me/stats', key)).body).toMatchObject({ links: 1, total_clicks: 2 });
    const elsewhere = await get(`/api/v1/users/me/stats?domain=${b.hostname}`, key);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.details[0].field).toBe('domain');
    expect(codes((await get('/api/v1/users/me/links', key)).body)).toEqual([onA.short_code]);
    expect(
      (await get(`/api/v1/links/${onA.short_code}/clicks?domain=${a.hostname}`, key, { accept: 'text/csv' })).status,
    ).toBe(200);
    expect((await get(`/api/v1/links/${onB.short_code}/clicks?domain=${b.hostname}`, key)).status).toBe(403);
    expect((await get(`/api/v1/links/${onB.short_code}/stats?domain=${b.hostname}`, key)).status).toBe(403);
    const adminKey = await keyFor(admin, [b.id]);
    expect(codes((await get('/api/v1/links?limit=100', adminKey)).body)).toEqual([onB.short_code]);
  });
});

/**
 * A user's statistics by domain look only into the links with clicks in the window (their first and last click
 * around it): links active in other months are left out, and none active in it is, however the window's edges
 * fall against the visits' hours.
 */
describe.each(engines)("a user's statistics by domain over windows on %s", (engine) => {
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;
  let d: DomainTestApp;
  afterAll(async () => d.close());

  it("when a domain's links were visited in different weeks, then each window counts the visits inside it, its first and last hour included", async () => {
    d = await domainTestApp(engine);
    const owner = await createUser(d.t, { status: 'active' });
    const a = await verifiedDomain(d, owner.token);
    const early = await createLink(d.t, { domain: a.hostname }, owner.token);
    const late = await createLink(d.t, { domain: a.hostname }, owner.token);
    const start = Math.floor(d.t.clock.now() / DAY) * DAY + DAY; // midnight of the next UTC day
    d.t.clock.ms = start;
    expect((await visit(d.t, early.short_code, { host: a.hostname })).status).toBe(302); // 00:00:00.000, day 1
    d.t.clock.ms = start + 14 * DAY + 23 * HOUR + 59 * 60_000; // 23:59 on day 15
    expect((await visit(d.t, late.short_code, { host: a.hostname })).status).toBe(302);
    expect((await visit(d.t, late.short_code, { host: a.hostname })).status).toBe(302);
    d.t.clock.ms = start + 20 * DAY;
    await d.t.app.clickQueue.flush();
    const token = await login(d.t, owner.username, owner.password); // the first one has expired meanwhile
    const stats = async (from: number, to: number, interval: 'hour' | 'day') => {
      const res = await d.t.request({
        url: `/api/v1/users/me/stats?domain=${a.hostname}&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&interval=${interval}`,
        token,
      });
      expect(res.status, res.text).toBe(200);
      const clicks = res.body.timeseries.reduce((n: number, s: { clicks: number }) => n + s.clicks, 0);
      return {
        clicks,
        top: (res.body.top_links as Array<{ short_code: string; clicks: number }>).map((l) => [l.short_code, l.clicks]),
        devices: res.body.top_devices,
      };
    };
    // The first hour of the window is the early visit's.
    expect(await stats(start, start + 2 * DAY, 'day')).toEqual({
      clicks: 1,
      top: [[early.short_code, 1]],
      devices: [{ value: 'desktop', clicks: 1 }],
    });
    expect(await stats(start, start + HOUR, 'hour')).toMatchObject({ clicks: 1, top: [[early.short_code, 1]] });
    // Between the two: nothing.
    expect(await stats(start + DAY, start + 14 * DAY, 'day')).toEqual({ clicks: 0, top: [], devices: [] });
    // The last hour of the window holds the late visits (23:00 to midnight of day 15).
    expect(await stats(start + 14 * DAY + 23 * HOUR, start + 15 * DAY, 'hour')).toMatchObject({
      clicks: 2,
      top: [[late.short_code, 2]],
    });
    expect(await stats(start + 2 * DAY, start + 15 * DAY, 'day')).toEqual({
      clicks: 2,
      top: [[late.short_code, 2]],
      devices: [{ value: 'desktop', clicks: 2 }],
    });
    expect(await stats(start, start + 20 * DAY, 'day')).toMatchObject({
      clicks: 3,
      top: [
        [late.short_code, 2],
        [early.short_code, 1],
      ],
    });
  });

  it('when every link of the user is on the domain, then by domain and without it the figures are the same for every window, in a zone whose midnight is not a whole UTC hour too', async () => {
    d = await domainTestApp(engine);
    const owner = await createUser(d.t, { status: 'active' });
    const a = await verifiedDomain(d, owner.token);
    const links = [
      await createLink(d.t, { domain: a.hostname }, owner.token),
      await createLink(d.t, { domain: a.hostname }, owner.token),
    ];
    const start = Math.floor(d.t.clock.now() / DAY) * DAY + DAY;
    // Kolkata's midnight is 18:30 UTC: a visit at 18:45 UTC is in the hour (18:00) that a window ending at that
    // midnight still reads, though the visit itself is after the window's end.
    const visits = [
      [0, 18 * HOUR + 45 * 60_000],
      [1, 2 * DAY + 18 * HOUR + 10 * 60_000],
      [0, 3 * DAY + 5 * HOUR],
    ] as const;
    for (const [i, at] of visits) {
      d.t.clock.ms = start + at;
      expect((await visit(d.t, links[i]!.short_code, { host: a.hostname })).status).toBe(302);
    }
    d.t.clock.ms = start + 10 * DAY;
    await d.t.app.clickQueue.flush();
    const token = await login(d.t, owner.username, owner.password);
    const figures = async (query: string) => {
      const res = await d.t.request({ url: `/api/v1/users/me/stats?${query}`, token });
      expect(res.status, res.text).toBe(200);
      const { timeseries, top_links, top_devices, top_browsers } = res.body;
      return { timeseries, top_links, top_devices, top_browsers };
    };
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const [from, to, interval, tz] of [
      [start, start + 5 * DAY, 'day', 'UTC'],
      [start - DAY, start + DAY, 'day', 'Asia/Kolkata'],
      [start + DAY, start + 3 * DAY, 'day', 'Asia/Kolkata'],
      [start + 18 * HOUR, start + 19 * HOUR, 'hour', 'UTC'],
      [start + 2 * DAY, start + 4 * DAY, 'hour', 'Asia/Kolkata'],
    ] as const) {
      const window = `from=${iso(from)}&to=${iso(to)}&interval=${interval}&tz=${tz}`;
      expect(await figures(`domain=${a.hostname}&${window}`), window).toEqual(await figures(window));
    }
  });
});
