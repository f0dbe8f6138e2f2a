import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { engines, type ApiResponse } from '../../helpers/app.js';
import { clickRecords, createUser, linkCount, visit } from '../../helpers/factories.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { useSourceStub } from '../../helpers/source-stub.js';
import { KUTT_API_KEY, kuttLinks, kuttPage } from './fixtures/kutt.js';
import {
  SHLINK_API_KEY,
  shlinkPage,
  shlinkRedirectRulesAt,
  shlinkShortUrls,
  shlinkVisits,
  shlinkVisitsPage,
} from './fixtures/shlink.js';

type Job = {
  id: number;
  state: string;
  progress: Record<string, number>;
  items: { source: string; outcome: string; short_code: string | null; message: string | null }[];
  error: string | null;
};

const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)), 'utf8');

describe.each(engines)('admin import jobs on %s', (engine) => {
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });
  const shlink = useSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, (path, q) => {
    const page = Number(q.get('page') ?? 1);
    if (path === '/rest/v3/short-urls')
      return shlinkPage('shortUrls', shlinkShortUrls, page, Number(q.get('itemsPerPage') ?? 10));
    const m = /^\/rest\/v3\/short-urls\/([^/]+)\/visits$/.exec(path);
    return m ? shlinkVisitsPage(shlinkVisits[decodeURIComponent(m[1]!)] ?? [], q) : shlinkRedirectRulesAt(path);
  });
  const kutt = useSourceStub({ header: 'X-API-KEY', value: KUTT_API_KEY }, (path, q) =>
    path === '/api/v2/links' ? kuttPage(kuttLinks, Number(q.get('skip') ?? 0), Number(q.get('limit') ?? 10)) : null,
  );

  /** Waits for the job to leave `running` (each poll is a GET of the job, as a client would). */
  async function finished(res: ApiResponse): Promise<Job> {
    expect(res.status, res.text).toBe(202);
    const location = res.headers.location as string;
    expect(location).toBe(`/api/v1/imports/${(res.body as Job).id}`);
    for (let i = 0; i < 500; i += 1) {
      const job = await t.request({ url: location, token: admin.token });
      expect(job.status).toBe(200);
      if ((job.body as Job).state !== 'running') return job.body as Job;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the import did not finish');
  }
  const start = (payload: unknown, token = admin.token) =>
    t.request({ method: 'POST', url: '/api/v1/imports', payload, token });

  it('when an admin imports from Shlink, then links keep code, target, title, tags, limits and their visits in the statistics', async () => {
    const job = await finished(await start({ source: 'shlink', url: shlink.url, api_key: SHLINK_API_KEY }));
    expect(job.state).toBe('done');
    expect(job.progress).toMatchObject({ items: 3, created: 3, failed: 0, visits: 4 });
    // On its own domain (made for the admin, unverified), as an alias of a generated code there.
    const summer = job.items.find((i) => i.source === 'go.example.com/summer-sale-2024')!;
    expect(summer).toMatchObject({ outcome: 'created', message: expect.stringMatching(/alias of a generated code/) });
    expect(
      (await t.request({ url: `/api/v1/links/${summer.short_code}?domain=go.example.com`, token: admin.token })).body,
    ).toMatchObject({
      domain: 'go.example.com',
      aliases: ['summer-sale-2024'],
      original_url: 'https://shop.example.com/sale?x=1',
      expires_at: '2030-01-01T00:00:00.000Z',
    });
    expect(job.items.find((i) => i.source === '/12C18')!.message).toMatch(/validSince.*geolocation-city-name/s);
    const link = await t.request({ url: '/api/v1/links/12C18', token: admin.token });
    expect(link.body).toMatchObject({
      original_url: 'https://store.steampowered.com',
      title: 'Welcome to Steam',
      tags: ['games', 'tech'],
      max_visits: 100,
      forward_query: true,
      user_id: admin.id,
      created_at: '2016-08-21T18:34:16.000Z',
      click_count: 3,
    });
    const stats = await t.request({
      url: '/api/v1/links/12C18/stats?from=2015-08-01T00:00:00Z&to=2015-09-01T00:00:00Z',
      token: admin.token,
    });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ total_clicks: 3, bot_clicks: 1, human_clicks: 2 });
    const rows = await t.storage.db
      .selectFrom('clicks')
      .select(['imported', 'country'])
      .where('short_code', '=', '12C18')
      .execute();
    expect(rows.map((r) => Number(r.imported))).toEqual([1, 1, 1]);
    const visit = await t.request({ url: '/12C18' });
    expect(visit.status).toBe(302);
    expect(visit.headers.location).toBe('https://store.steampowered.com');
  });

  it("when Shlink's links have redirect rules, then they come over as rules in priority order", async () => {
    const job = await finished(await start({ source: 'shlink', url: shlink.url, api_key: SHLINK_API_KEY }));
    expect(job.state).toBe('done');
    const res = await t.request({ url: '/api/v1/links/12C18/rules', token: admin.token });
    expect(res.status).toBe(200);
    const { rules } = res.body as { rules: Array<{ conditions: unknown[]; target: { url: string } }> };
    expect(rules.map((r) => r.target.url)).toEqual([
      'https://store.steampowered.com/de',
      'https://store.steampowered.com/android',
      'https://store.steampowered.com/office',
      'https://store.steampowered.com/sale',
    ]);
    expect(rules[0]!.conditions).toEqual([
      { type: 'language', values: ['de-DE'] },
      { type: 'query', key: 'ref', match: 'equals', values: ['mail'] },
    ]);
    expect(rules[2]!.conditions).toEqual([
      { type: 'ip', values: ['192.168.1.0/24'] },
      { type: 'query', key: 'promo', match: 'present', values: [] },
    ]);
    expect(rules[3]!.conditions).toEqual([
      { type: 'after', values: ['2025-01-01T00:00:00.000Z'] },
      { type: 'query', key: 'x', match: 'equals', values: [''] },
      { type: 'country', values: ['DE'] },
    ]);
    // The imported rules route visits as Shlink did: German with ?ref=mail, then Android, else the long URL.
    const german = await t.request({ url: '/12C18?ref=mail', headers: { 'accept-language': 'de-DE,de;q=0.9' } });
    // forward_query (Shlink's forwardQuery) carries the visit's query on, as for the long URL.
    expect(german.headers.location).toBe('https://store.steampowered.com/de?ref=mail');
    const android = await t.request({
      url: '/12C18',
      headers: {
        'user-agent': 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36',
      },
    });
    expect(android.headers.location).toBe('https://store.steampowered.com/android');
    expect((await t.request({ url: '/12C18?ref=web', headers: { 'accept-language': 'de' } })).headers.location).toMatch(
      /^https:\/\/store\.steampowered\.com\/?\?ref=web$/,
    );
  });

  it('when the same source is imported again, then nothing changes and every item says so', async () => {
    const job = await finished(await start({ source: 'shlink', url: shlink.url, api_key: SHLINK_API_KEY }));
    expect(job.progress).toMatchObject({ items: 3, created: 0, unchanged: 3, visits: 0 });
    const clicks = await t.storage.db
      .selectFrom('clicks')
      .select('id')
      .where('short_code', '=', '12C18')
      .where('imported', '=', 1)
      .execute();
    expect(clicks).toHaveLength(3);
  });

  it('when Kutt is imported as a dry run, then the job says what would happen and no link (nor domain) exists', async () => {
    const job = await finished(await start({ source: 'kutt', url: kutt.url, api_key: KUTT_API_KEY, dry_run: true }));
    expect(job.progress).toMatchObject({ items: 3, created: 3, failed: 0 });
    expect(job.items.find((i) => i.source === '/launch-day')).toMatchObject({
      outcome: 'would-create',
      message: expect.stringMatching(/alias of a generated code/),
    });
    expect((await t.request({ url: '/launch-day' })).status).toBe(404);
    expect((await t.request({ url: '/api/v1/links/abc123' })).status).toBe(404);
    expect(
      await t.storage.db.selectFrom('domains').select('id').where('hostname', '=', 'l.example.org').execute(),
    ).toEqual([]);
  });

  it('when Kutt is imported, then its visit count becomes the click count and a taken code is a listed conflict', async () => {
    const taken = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: 'https://example.com/mine', short_code: 'promo' },
      token: admin.token,
    });
    expect(taken.status).toBe(201);
    const job = await finished(
      await start({ source: 'kutt', url: kutt.url, api_key: KUTT_API_KEY, domain_map: { 'l.example.org': 'default' } }),
    );
    expect(job.progress).toMatchObject({ items: 3, created: 2, conflicts: 1, failed: 0 });
    const launch = job.items.find((i) => i.source === '/launch-day')!;
    expect((await t.request({ url: `/api/v1/links/${launch.short_code}`, token: admin.token })).body.aliases).toEqual([
      'launch-day',
    ]);
    expect((await t.request({ url: '/launch-day' })).status).toBe(302);
    expect(job.items.find((i) => i.outcome === 'conflict')).toMatchObject({
      source: 'l.example.org/promo',
      short_code: 'promo',
    });
    expect((await t.request({ url: '/api/v1/links/abc123', token: admin.token })).body).toMatchObject({
      click_count: 42,
      title: 'Our docs',
    });
  });

  it('when --on-conflict fail meets a taken code, then the job fails naming it', async () => {
    const job = await finished(
      await start({
        source: 'kutt',
        url: kutt.url,
        api_key: KUTT_API_KEY,
        on_conflict: 'fail',
        domain_map: { 'l.example.org': 'default' },
      }),
    );
    expect(job.state).toBe('failed');
    expect(job.error).toMatch(/promo/);
  });

  it('when a CSV file is the body, then its rows are imported for the named owner', async () => {
    const owner = await createUser(t, { status: 'active' });
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/imports?source=csv&owner=${encodeURIComponent(owner.username)}`,
      payload: fixture('generic.csv'),
      headers: { 'content-type': 'text/csv' },
      token: admin.token,
    });
    const job = await finished(res);
    expect(job.progress).toMatchObject({ items: 3, created: 3, failed: 0 });
    const gen1 = await t.request({ url: '/api/v1/links/gen1', token: owner.token });
    expect(gen1.body).toMatchObject({
      user_id: owner.id,
      tags: ['news', 'tech'],
      title: 'A title, with comma',
      forward_query: true,
      aliases: ['gen-one', 'first-link'],
    });
    expect((await visit(t, 'first-link')).headers.location).toBe('https://example.com/a');
    expect((await visit(t, 'very-long-code-from-elsewhere')).headers.location).toBe('https://example.com/c');
  });

  it('when a CSV keyword does not fit short_code (summer-sale), then it is an alias of a generated code: its old short URL redirects and counts for the link, and a re-run changes nothing', async () => {
    const keyword = `summer-sale-${Math.random().toString(36).slice(2, 8)}`;
    const csv = `url,code,tags\r\nhttps://example.com/summer,${keyword},sale\r\n`;
    const run = async () =>
      finished(
        await t.request({
          method: 'POST',
          url: '/api/v1/imports?source=csv',
          payload: csv,
          headers: { 'content-type': 'text/csv' },
          token: admin.token,
        }),
      );
    const first = await run();
    expect(first.progress).toMatchObject({ items: 1, created: 1 });
    const code = first.items[0]!.short_code!;
    expect(code).toMatch(/^[0-9a-zA-Z]{8}$/);
    const link = await t.request({ url: `/api/v1/links/${code}`, token: admin.token });
    expect(link.body).toMatchObject({ aliases: [keyword], tags: ['sale'], original_url: 'https://example.com/summer' });
    const res = await visit(t, keyword);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://example.com/summer');
    expect((await clickRecords(t, link.body.id)).map((r) => r.alias)).toEqual([keyword]);
    const before = await linkCount(t);
    const again = await run();
    expect(again.progress).toMatchObject({ items: 1, created: 0, unchanged: 1 });
    expect(await linkCount(t)).toBe(before);
    expect((await t.request({ url: `/api/v1/links/${code}`, token: admin.token })).body.aliases).toEqual([keyword]);
  });

  it('when someone who is not an admin starts an import, then 403; a bad body is 400 naming the field', async () => {
    const user = await createUser(t, { status: 'active' });
    expect((await start({ source: 'shlink', url: shlink.url, api_key: 'x' }, user.token)).status).toBe(403);
    expect((await start({ source: 'shlink' })).status).toBe(400);
    const bad = await start({ source: 'nowhere' });
    expect(bad.status).toBe(400);
    // No body and no Content-Type (the fuzz test's find): 400 naming the body, not a 500.
    const empty = await t.request({ method: 'POST', url: '/api/v1/imports', token: admin.token });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body' }] });
    expect((await t.request({ url: '/api/v1/imports/999999', token: admin.token })).status).toBe(404);
  });
});
