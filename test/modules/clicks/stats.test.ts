import { describe, expect, it } from 'vitest';
import { engines, TestClock } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createLink, createUser, visit } from '../../helpers/factories.js';

const T0 = Date.parse('2026-03-10T10:20:00.000Z');
const HOUR = 3_600_000;

describe.each(engines)('link statistics on %s', (engine) => {
  const t = useTestApp(engine, {
    clock: new TestClock(T0),
    env: { TRUST_PROXY: 'true', TOKEN_TTL_SECONDS: '2592000' },
  });
  const owner = useUser(t);

  const create = (token?: string) => createLink(t, { original_url: 'https://example.com/s' }, token);
  // A person's browser through the trusted proxy, unless the test names another agent.
  const visitFrom = (code: string, ip: string, headers: Record<string, string> = {}) =>
    visit(t, code, { 'x-forwarded-for': ip, ...headers });
  const stats = async (code: string, query = '', token?: string) => {
    await t.app.clickQueue.flush();
    return t.request({ url: `/api/v1/links/${code}/stats${query}`, ...(token ? { token } : {}) });
  };

  it('when a link has no clicks, then zeros, nulls and a series of empty buckets', async () => {
    const link = await create();
    const res = await stats(link.short_code);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      short_code: link.short_code,
      total_clicks: 0,
      click_count: 0,
      unique_visitors: 0,
      first_click_at: null,
      last_click_at: null,
      interval: 'day',
      top_referrers: [],
      top_user_agents: [],
    });
    expect(res.body.timeseries.every((b: { clicks: number }) => b.clicks === 0)).toBe(true);
  });

  it('when clicks spread over hours and days, then lifetime totals, an hourly and a daily series with empty buckets filled', async () => {
    t.clock.ms = T0;
    const link = await create(owner.token);
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.1']) await visitFrom(link.short_code, ip); // 10:20
    t.clock.ms = T0 + 2 * HOUR - 15 * 60_000; // 12:05
    for (const ip of ['10.0.0.3', '10.0.0.1']) await visitFrom(link.short_code, ip);
    t.clock.ms = Date.parse('2026-03-11T09:00:00.000Z');
    await visitFrom(link.short_code, '10.0.0.4');

    const hourly = await stats(
      link.short_code,
      '?interval=hour&from=2026-03-10T10:30:00Z&to=2026-03-10T13:00:00Z',
      owner.token,
    );
    expect(hourly.status).toBe(200);
    expect(hourly.body).toMatchObject({
      total_clicks: 6,
      click_count: 6,
      unique_visitors: 4,
      first_click_at: '2026-03-10T10:20:00.000Z',
      last_click_at: '2026-03-11T09:00:00.000Z',
      from: '2026-03-10T10:00:00.000Z',
      to: '2026-03-10T13:00:00.000Z',
      interval: 'hour',
    });
    expect(hourly.body.timeseries).toEqual([
      { start: '2026-03-10T10:00:00.000Z', clicks: 3, bots: 0 },
      { start: '2026-03-10T11:00:00.000Z', clicks: 0, bots: 0 },
      { start: '2026-03-10T12:00:00.000Z', clicks: 2, bots: 0 },
    ]);

    const daily = await stats(link.short_code, '', owner.token);
    expect(daily.body.from).toBe('2026-03-10T00:00:00.000Z');
    expect(daily.body.to).toBe('2026-03-12T00:00:00.000Z');
    expect(daily.body.timeseries).toEqual([
      { start: '2026-03-10T00:00:00.000Z', clicks: 5, bots: 0 },
      { start: '2026-03-11T00:00:00.000Z', clicks: 1, bots: 0 },
    ]);
    const gap = await stats(link.short_code, '?from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z', owner.token);
    expect(gap.body.timeseries).toHaveLength(4);
    expect(gap.body.timeseries.every((b: { clicks: number }) => b.clicks === 0)).toBe(true);
    expect(gap.body.total_clicks).toBe(6); // lifetime figures do not depend on the window
  });

  it('when visits carry referrers and user agents, then top lists by origin and by agent, most clicks first, at most 10', async () => {
    const link = await create();
    const plan: Array<[string, string, number]> = [
      ['https://news.example/item?id=1', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/1', 3],
      ['https://news.example/other', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/2', 2],
      ['https://blog.example/post', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/1', 1],
      ['android-app://com.mail/', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/3', 1],
    ];
    for (const [referer, ua, n] of plan)
      for (let i = 0; i < n; i += 1) await visitFrom(link.short_code, '10.1.0.1', { referer, 'user-agent': ua });
    for (let i = 0; i < 12; i += 1)
      await visitFrom(link.short_code, '10.1.0.2', { 'user-agent': `Mozilla/5.0 (Z-rare ${i})` });
    const res = await stats(link.short_code);
    expect(res.body.top_referrers).toEqual(
      [
        { value: '(direct)', clicks: 12 },
        { value: 'https://news.example', clicks: 5 },
        { value: 'android-app://com.mail/', clicks: 1 },
        { value: 'https://blog.example', clicks: 1 },
      ].sort((a, b) => b.clicks - a.clicks || (a.value < b.value ? -1 : 1)),
    );
    expect(res.body.top_user_agents).toHaveLength(10);
    expect(res.body.top_user_agents.slice(0, 3)).toEqual([
      { value: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/1', clicks: 4 },
      { value: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/2', clicks: 2 },
      { value: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/3', clicks: 1 },
    ]);
  });

  it('when more than 100 distinct referrers arrive in a day, then the rest is counted as "(other)"', async () => {
    const link = await create();
    for (let i = 0; i < 100; i += 1)
      await visitFrom(link.short_code, '10.2.0.1', { referer: `https://r${i}.example/` });
    await t.app.clickQueue.flush();
    for (let i = 100; i < 106; i += 1)
      await visitFrom(link.short_code, '10.2.0.1', { referer: `https://r${i}.example/` });
    const res = await stats(link.short_code);
    expect(res.body.top_referrers[0]).toEqual({ value: '(other)', clicks: 6 });
    expect(res.body.total_clicks).toBe(106);
    const rows = await t.storage.db
      .selectFrom('link_click_daily_values')
      .select('value')
      .where('link_id', '=', link.id)
      .where('kind', '=', 'referrer')
      .execute();
    expect(rows).toHaveLength(101);
  });

  it("when someone else asks for an owned link's stats, then 403; without a token 401; the owner and an admin 200; an anonymous link: anyone", async () => {
    const other = await createUser(t);
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const owned = await create(owner.token);
    expect((await stats(owned.short_code, '', other.token)).status).toBe(403);
    const anon = await stats(owned.short_code);
    expect(anon.status).toBe(401);
    expect(anon.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await stats(owned.short_code, '', owner.token)).status).toBe(200);
    expect((await stats(owned.short_code, '', admin.token)).status).toBe(200);
    const open = await create();
    expect((await stats(open.short_code, '', other.token)).status).toBe(200);
    expect((await stats(open.short_code)).status).toBe(200);
    expect((await stats('unknown1')).status).toBe(404);
  });

  it.each([
    ['from after to', '?from=2026-03-10T00:00:00Z&to=2026-03-09T00:00:00Z', 'from'],
    ['from equal to to', '?from=2026-03-10T00:00:00Z&to=2026-03-10T00:00:00Z', 'from'],
    ['not a date-time', '?from=yesterday', 'from'],
    ['a bad interval', '?interval=year', 'interval'],
    ['too many hourly buckets', '?interval=hour&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'from'],
    ['too many daily buckets', '?interval=day&from=2020-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'from'],
    ['too many monthly buckets', '?from=1900-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'from'],
  ])('when the query has %s, then 400 VALIDATION_ERROR naming it', async (_label, query, field) => {
    const link = await create();
    const res = await stats(link.short_code, query);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('when the link is old, then by an interval asked for the default window is as long as the bucket limit allows; unasked, all of its life by week', async () => {
    t.clock.ms = T0; // a Tuesday: 1,500 days later is in the 215th ISO week counted from the one holding it
    const link = await create();
    t.clock.advance(1500 * 24 * HOUR);
    const res = await stats(link.short_code, '?interval=day');
    expect(res.status).toBe(200);
    expect(res.body.timeseries).toHaveLength(1000);
    const hourly = await stats(link.short_code, '?interval=hour');
    expect(hourly.body.timeseries).toHaveLength(1000);
    const unasked = await stats(link.short_code);
    expect(unasked.body.interval).toBe('week');
    expect(unasked.body.timeseries).toHaveLength(215);
  });
});
