import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type ApiResponse, type TestApp } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';

const HEADER = 'url,code,domain,created_at,expires_at,tags,title,max_visits,forward_query,aliases';
/** What an export must carry over (SPEC §20): the fields a link record and the generic CSV share. */
const CARRIED = [
  'short_code',
  'domain',
  'original_url',
  'created_at',
  'expires_at',
  'tags',
  'title',
  'max_visits',
  'forward_query',
  'aliases',
] as const;

type LinkRecord = Record<string, unknown> & { short_code: string; domain: string | null };
const carried = (links: LinkRecord[]) =>
  links
    .map((l) => Object.fromEntries(CARRIED.map((k) => [k, l[k] ?? null])))
    .sort((a, b) => `${a.domain}/${a.short_code}`.localeCompare(`${b.domain}/${b.short_code}`));

/** SPEC §20: GET /users/{id}/links with Accept: text/csv, in the generic CSV format the csv importer reads. */
describe.each(engines)('the links CSV export on %s', (engine) => {
  const from = useTestApp(engine);
  const owner = useUser(from, { status: 'active' });
  beforeAll(async () => {
    const domain = await from.request({
      method: 'POST',
      url: '/api/v1/domains',
      payload: { hostname: 'go.example.com' },
      token: owner.token,
    });
    expect(domain.status, domain.text).toBe(201);
    const links = [
      {
        original_url: 'https://example.com/a?x=1&y=2',
        short_code: 'exp1',
        tags: ['news', 'tech-talk'],
        title: 'A title, with "quotes", and a comma',
        max_visits: 5,
        forward_query: true,
        expires_at: '2099-01-02T03:04:05.678Z',
      },
      {
        original_url: 'https://example.com/b',
        short_code: 'exp2',
        title: '-50% today',
        tags: ['-promo'],
        aliases: ['summer-sale-2024', '-dash_first'],
      },
      {
        original_url: 'https://example.com/c',
        short_code: 'exp2',
        domain: 'go.example.com',
        title: "'=already quoted",
        aliases: ['summer-sale-2024'],
      },
      { original_url: 'https://example.com/d', title: '@home, again', password: 'a-long-password' },
    ];
    for (const [i, payload] of links.entries()) {
      from.clock.advance(1000 + i);
      const res = await from.request({ method: 'POST', url: '/api/v1/links', payload, token: owner.token });
      expect(res.status, res.text).toBe(201);
    }
  });

  const exportOf = (query = '', accept = 'text/csv', token = owner.token) =>
    from.request({ url: `/api/v1/users/me/links${query}`, headers: { accept }, token });
  const list = async (t: TestApp, token: string, userId: number | string = 'me') =>
    ((await t.request({ url: `/api/v1/users/${userId}/links?limit=100`, token })).body as { data: LinkRecord[] }).data;

  it('when another Ferry imports the export, then it holds the same links: code, domain, target, dates, tags, title, limits', async () => {
    const csv = await exportOf();
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers.vary).toMatch(/Accept/);
    expect(csv.text.split('\r\n')[0]).toBe(HEADER);
    expect(csv.text).toContain(",'-50% today,"); // escaped for spreadsheets, and read back as it was
    const to = await createTestApp(engine);
    try {
      const admin = await createUser(to, { role: 'admin', status: 'active' });
      const res = await to.request({
        method: 'POST',
        url: '/api/v1/imports?source=csv',
        payload: csv.text,
        headers: { 'content-type': 'text/csv' },
        token: admin.token,
      });
      expect(res.status, res.text).toBe(202);
      const job = await finished(to, res, admin.token);
      expect(job).toMatchObject({ state: 'done', progress: { items: 4, created: 4, failed: 0 } });
      const imported = carried(await list(to, admin.token));
      expect(imported).toEqual(carried(await list(from, owner.token)));
      expect(imported.find((l) => l.short_code === 'exp2' && l.domain === null)!.aliases).toEqual([
        'summer-sale-2024',
        '-dash_first',
      ]);
      expect((await to.request({ url: '/summer-sale-2024' })).headers.location).toBe('https://example.com/b');
      const again = await finished(
        to,
        await to.request({
          method: 'POST',
          url: '/api/v1/imports?source=csv',
          payload: csv.text,
          headers: { 'content-type': 'text/csv' },
          token: admin.token,
        }),
        admin.token,
      );
      expect(again.progress).toMatchObject({ items: 4, created: 0, unchanged: 4 });
    } finally {
      await to.close();
    }
  });

  it('when the list is filtered, then the export holds what the JSON list would (every page of it), in its sort', async () => {
    const byTag = parse((await exportOf('?tag=NEWS')).text, { columns: true }) as Array<Record<string, string>>;
    expect(byTag.map((r) => r.code)).toEqual(['exp1']);
    expect(byTag[0]).toMatchObject({
      tags: 'news|tech-talk',
      max_visits: '5',
      forward_query: 'true',
      expires_at: '2099-01-02T03:04:05.678Z',
      domain: '',
      aliases: '',
    });
    const onDomain = parse((await exportOf('?domain=go.example.com')).text, { columns: true }) as Array<
      Record<string, string>
    >;
    expect(onDomain).toMatchObject([
      { code: 'exp2', domain: 'go.example.com', url: 'https://example.com/c', aliases: 'summer-sale-2024' },
    ]);
    const newest = parse((await exportOf('?sort=created_at&order=desc&limit=1&q=example.com')).text, {
      columns: true,
    }) as Array<Record<string, string>>;
    expect(newest.map((r) => r.url)).toEqual([
      'https://example.com/d',
      'https://example.com/c',
      'https://example.com/b',
      'https://example.com/a?x=1&y=2',
    ]);
    expect(newest[0]!.title).toBe("'@home, again");
  });

  it('when a user has no links, then the export is the header row alone', async () => {
    const nobody = await createUser(from, { status: 'active' });
    const csv = await exportOf('', 'text/csv', nobody.token);
    expect(csv.status).toBe(200);
    expect(csv.text).toBe(`${HEADER}\r\n`);
  });

  it('when Accept offers neither JSON nor CSV, then 406; an unknown user 404, another user 403, before any CSV', async () => {
    expect((await exportOf('', 'image/png')).status).toBe(406);
    expect((await exportOf('', 'text/csv;q=0.9, application/json')).headers['content-type']).toMatch(
      /^application\/json/,
    );
    const other = await createUser(from, { status: 'active' });
    expect(
      (
        await from.request({
          url: `/api/v1/users/${owner.id}/links`,
          headers: { accept: 'text/csv' },
          token: other.token,
        })
      ).status,
    ).toBe(403);
    const admin = await createUser(from, { role: 'admin', status: 'active' });
    expect(
      (await from.request({ url: '/api/v1/users/999999/links', headers: { accept: 'text/csv' }, token: admin.token }))
        .status,
    ).toBe(404);
    expect(
      (
        await from.request({
          url: `/api/v1/users/${owner.id}/links`,
          headers: { accept: 'text/csv' },
          token: admin.token,
        })
      ).text.split('\r\n'),
    ).toHaveLength(6);
    const v2 = await from.request({
      url: '/api/v2/users/me/links',
      headers: { accept: 'text/csv' },
      token: owner.token,
    });
    expect(v2.text.split('\r\n')[0]).toBe(HEADER);
  });
});

async function finished(
  t: TestApp,
  res: ApiResponse,
  token: string,
): Promise<{ state: string; progress: Record<string, number> }> {
  expect(res.status, res.text).toBe(202);
  for (let i = 0; i < 500; i += 1) {
    const job = await t.request({ url: res.headers.location as string, token });
    if (job.body.state !== 'running') return job.body;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the import did not finish');
}
