import { beforeAll, describe, expect, it } from 'vitest';
import { importedVisitsWriter } from '../../../src/modules/clicks/index.js';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { createLink, HUMAN_UA, visit, type CreatedLink } from '../links/links.helpers.js';

describe.each(engines)('GET /api/v1/links/{code}/clicks on %s', (engine) => {
  let link: CreatedLink;
  const visits = [
    { 'user-agent': HUMAN_UA, referer: 'https://news.example/a' },
    { 'user-agent': 'Agent, "quoted"\tand tabbed', referer: '=HYPERLINK("https://evil.example","click me")' },
    { 'user-agent': '+1 trick', referer: '@SUM(A1:A9)' },
    { 'user-agent': '-2 trick', referer: 'https://x.example/a,b' },
  ];
  const t = useTestApp(engine);
  const owner = useUser(t);
  beforeAll(async () => {
    link = await createLink(t, { original_url: 'https://example.com/counted' }, owner.token);
    for (const headers of visits) {
      const res = await visit(t, link.short_code, headers);
      expect(res.status).toBe(302);
      t.clock.advance(60_000);
    }
    await t.app.clickQueue.flush();
  });

  const clicks = (query = '', headers: Record<string, string> = {}, token: string | null = owner.token, version = 1) =>
    t.request({
      url: `/api/v${version}/links/${link.short_code}/clicks${query}`,
      headers,
      ...(token ? { token } : {}),
    });

  it('when the owner asks, then the click records newest first, with their fields, paged by cursor', async () => {
    const all = await clicks();
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toHaveLength(4);
    expect(all.body.data.map((c: { referrer: string }) => c.referrer)).toEqual(
      [...visits].reverse().map((v) => v.referer),
    );
    expect(Object.keys(all.body.data[0]).sort()).toEqual([
      'alias',
      'browser',
      'clicked_at',
      'country',
      'device',
      'domain',
      'id',
      'imported',
      'ip',
      'is_bot',
      'os',
      'referrer',
      'rule_id',
      'user_agent',
      'variant_id',
    ]);
    expect(all.body.data[3]).toMatchObject({
      ip: '127.0.0.1',
      user_agent: HUMAN_UA,
      referrer: 'https://news.example/a',
    });
    expect(all.body.pagination).toEqual({ limit: 20, nextCursor: null });
    const first = await clicks('?limit=3');
    expect(first.body.data).toEqual(all.body.data.slice(0, 3));
    expect(first.headers.link).toContain('rel="next"');
    const second = await clicks(`?limit=3&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
    expect(second.body.data).toEqual(all.body.data.slice(3));
    expect(second.body.pagination.nextCursor).toBeNull();
  });

  it('when from and to are given, then only the records in [from, to); a bad range is 400', async () => {
    const all = (await clicks()).body.data as Array<{ clicked_at: string }>;
    const inner = await clicks(`?from=${all[2]!.clicked_at}&to=${all[0]!.clicked_at}`);
    expect(inner.body.data).toEqual(all.slice(1, 3));
    expect(
      expectEnvelope(await clicks(`?from=${all[0]!.clicked_at}&to=${all[2]!.clicked_at}`), 400, 'VALIDATION_ERROR'),
    ).toEqual(['from']);
    expectEnvelope(await clicks('?from=yesterday'), 400, 'VALIDATION_ERROR');
  });

  it('when Accept is text/csv, then the whole range as CSV: header, RFC 4180 quoting, formulas neutralised, CRLF', async () => {
    const res = await clicks('?limit=1', { accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${link.short_code}-clicks.csv"`);
    expect(res.headers.vary).toMatch(/Accept/);
    const lines = res.text.split('\r\n');
    expect(lines[0]).toBe(
      'id,clicked_at,ip,user_agent,referrer,is_bot,browser,os,device,country,alias,imported,rule_id,variant_id,domain',
    );
    expect(lines.at(-1)).toBe('');
    expect(lines).toHaveLength(6); // header, 4 records (limit and cursor are JSON's), the final CRLF
    expect(lines[1]).toMatch(
      /^\d+,\d{4}-[^,]+Z,127\.0\.0\.1,'-2 trick,"https:\/\/x\.example\/a,b",true,,,bot,,,false,,,$/,
    );
    expect(lines[2]).toMatch(/,127\.0\.0\.1,'\+1 trick,'@SUM\(A1:A9\),false,,,other,,,false,,,$/);
    expect(lines[3]).toContain(
      ',127.0.0.1,"Agent, ""quoted""\tand tabbed","\'=HYPERLINK(""https://evil.example"",""click me"")"',
    );
    expect(lines[4]).toContain(`,"${HUMAN_UA}",https://news.example/a,false,Chrome,Linux,desktop,`);
    expect(res.text).not.toMatch(/,[=+\-@]/);
  });

  it('when v2 asks, then camelCase records and CSV header', async () => {
    const json = await clicks('', {}, owner.token, 2);
    expect(Object.keys(json.body.data[0]).sort()).toEqual([
      'alias',
      'browser',
      'clickedAt',
      'country',
      'device',
      'domain',
      'id',
      'imported',
      'ip',
      'isBot',
      'os',
      'referrer',
      'ruleId',
      'userAgent',
      'variantId',
    ]);
    const csv = await clicks('', { accept: 'text/csv' }, owner.token, 2);
    expect(csv.text.split('\r\n')[0]).toBe(
      'id,clickedAt,ip,userAgent,referrer,isBot,browser,os,device,country,alias,imported,ruleId,variantId,domain',
    );
  });

  it('when someone else, nobody, or an unservable Accept asks, then 403, 401 or 406; an admin may; an anonymous link only an admin', async () => {
    const other = await createUser(t);
    expectEnvelope(await clicks('', {}, other.token), 403, 'FORBIDDEN');
    expectEnvelope(await clicks('', {}, null), 401, 'UNAUTHENTICATED');
    expectEnvelope(await clicks('', { accept: 'text/html' }), 406, 'NOT_ACCEPTABLE');
    expect((await clicks('', { accept: 'application/json;q=0.5, text/csv' })).headers['content-type']).toMatch(
      /^text\/csv/,
    );
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    expect((await clicks('', {}, admin.token)).status).toBe(200);
    const anonymous = await createLink(t);
    expectEnvelope(
      await t.request({ url: `/api/v1/links/${anonymous.short_code}/clicks`, token: owner.token }),
      403,
      'FORBIDDEN',
    );
    expect(
      (await t.request({ url: `/api/v1/links/${anonymous.short_code}/clicks`, token: admin.token })).body.data,
    ).toEqual([]);
    expectEnvelope(await t.request({ url: '/api/v1/links/nOsUch33/clicks', token: admin.token }), 404, 'NOT_FOUND');
  });

  it("when a link's earlier visits were imported, then their records say imported: true (JSON and CSV), the redirected ones false", async () => {
    const moved = await createLink(t, { original_url: 'https://example.com/moved' }, owner.token);
    const at = Date.parse('2021-03-04T05:06:07.000Z');
    // As an importer writes them (SPEC §20): in its transaction, through the engine's imported-visits writer.
    await t.storage.db.transaction().execute((tx) =>
      importedVisitsWriter(t.storage)(
        tx,
        [0, 1].map((i) => ({
          linkId: moved.id,
          shortCode: moved.short_code,
          clickedAt: at + i * 1000,
          ip: `198.51.100.${i}`,
          userAgent: HUMAN_UA,
          referrer: null,
          country: 'DE',
        })),
      ),
    );
    expect((await visit(t, moved.short_code, { 'user-agent': HUMAN_UA })).status).toBe(302);
    await t.app.clickQueue.flush();
    const url = `/api/v1/links/${moved.short_code}/clicks`;
    const json = await t.request({ url, token: owner.token });
    expect(json.status, json.text).toBe(200);
    expect(
      json.body.data.map((c: { imported: boolean; clicked_at: string }) => [c.clicked_at.slice(0, 4), c.imported]),
    ).toEqual([
      [expect.stringMatching(/^20[2-9]\d$/), false],
      ['2021', true],
      ['2021', true],
    ]);
    expect(
      (await t.request({ url: url.replace('/v1/', '/v2/'), token: owner.token })).body.data.map(
        (c: { imported: boolean }) => c.imported,
      ),
    ).toEqual([false, true, true]);
    const csv = (await t.request({ url, token: owner.token, headers: { accept: 'text/csv' } })).text.split('\r\n');
    expect(csv.slice(1, 4).map((line) => line.split(',').at(-4))).toEqual(['false', 'true', 'true']);
    // No rule or split routed an imported visit (SPEC §21): both null, in JSON and as empty CSV cells.
    expect(json.body.data.map((c: { rule_id: null; variant_id: null }) => [c.rule_id, c.variant_id])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
    expect(csv.slice(1, 4).map((line) => line.split(',').slice(-3, -1))).toEqual([
      ['', ''],
      ['', ''],
      ['', ''],
    ]);
  });
});
