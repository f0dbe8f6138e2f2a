import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  isUnreadable,
  type ImportItem,
  type ImportVisit,
  type SourceEntry,
} from '../../../src/modules/imports/import-item.js';
import { readSource } from '../../../src/modules/imports/sources/index.js';
import { startSourceStub, type SourceStub } from '../../helpers/source-stub.js';
import { BITLY_GROUP, BITLY_TOKEN, bitlyLinks, bitlyPage } from './fixtures/bitly.js';
import { KUTT_API_KEY, kuttLinks, kuttPage } from './fixtures/kutt.js';
import {
  SHLINK_API_KEY,
  shlinkPage,
  shlinkRedirectRulesAt,
  shlinkShortUrls,
  shlinkVisits,
  shlinkVisitsPage,
} from './fixtures/shlink.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

async function collect(
  entries: AsyncIterable<SourceEntry>,
): Promise<(ImportItem & { visitList: ImportVisit[] | null })[]> {
  const out = [];
  for await (const e of entries) {
    if (isUnreadable(e)) throw new Error(`unreadable: ${e.reason}`);
    const visitList: ImportVisit[] | null = e.visits === null ? null : [];
    if (e.visits !== null) for await (const v of e.visits(null)) visitList!.push(v);
    out.push({ ...e, visitList });
  }
  return out;
}

let stub: SourceStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

describe('source readers', () => {
  it('when Shlink lists its short URLs over several pages, then every one comes with its visits and the X-Api-Key header', async () => {
    stub = await startSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, (path, q) => {
      const page = Number(q.get('page') ?? 1);
      const size = Number(q.get('itemsPerPage') ?? 10);
      if (path === '/rest/v3/short-urls') return shlinkPage('shortUrls', shlinkShortUrls, page, size);
      const m = /^\/rest\/v3\/short-urls\/([^/]+)\/visits$/.exec(path);
      return m ? shlinkVisitsPage(shlinkVisits[decodeURIComponent(m[1]!)] ?? [], q, 2) : shlinkRedirectRulesAt(path);
    });
    const items = await collect(readSource({ source: 'shlink', url: stub.url, apiKey: SHLINK_API_KEY }));
    expect(items.map((i) => [i.domain, i.code])).toEqual([
      [null, '12C18'],
      [null, '12Kb3'],
      ['go.example.com', 'summer-sale-2024'],
    ]);
    const steam = items[0]!;
    expect(steam).toMatchObject({
      target: 'https://store.steampowered.com',
      title: 'Welcome to Steam',
      tags: ['games', 'tech'],
      maxVisits: 100,
      forwardQuery: true,
      createdAt: Date.parse('2016-08-21T18:34:16Z'),
      expiresAt: null,
    });
    expect(steam.notImported.map((n) => n.field)).toEqual(['validSince', 'redirectRules.3']);
    expect(steam.rules?.map((r) => r.target.url)).toEqual([
      'https://store.steampowered.com/de',
      'https://store.steampowered.com/android',
      'https://store.steampowered.com/office',
      'https://store.steampowered.com/sale',
    ]);
    expect(items[1]!.rules).toBeUndefined();
    expect(stub.requests.filter((r) => r.path.endsWith('/redirect-rules')).map((r) => r.path)).toEqual([
      '/rest/v3/short-urls/12C18/redirect-rules',
    ]);
    expect(steam.visitList).toHaveLength(3);
    expect(steam.visitList![1]).toMatchObject({
      referrer: 'https://t.co',
      country: 'US',
      isBot: false,
      at: Date.parse('2015-08-21T01:05:03Z'),
    });
    expect(steam.visitList![2]).toMatchObject({ referrer: null, isBot: true });
    expect(items[2]!.expiresAt).toBe(Date.parse('2030-01-01T00:00:00Z'));
    expect(items[2]!.visitList![0]).toMatchObject({ referrer: null, country: 'DE' });
    const visitCalls = stub.requests.filter((r) => r.path.endsWith('/visits'));
    expect(visitCalls.find((r) => r.path.includes('summer-sale'))!.query.get('domain')).toBe('go.example.com');
    expect(visitCalls.filter((r) => r.path.includes('12C18')).map((r) => r.query.get('page'))).toEqual(['1', '2']);
  });

  it('when the Shlink key is wrong, then the import stops saying the source refused it', async () => {
    stub = await startSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, () => ({}));
    await expect(collect(readSource({ source: 'shlink', url: stub.url, apiKey: 'wrong' }))).rejects.toThrow(
      /answered 401/,
    );
  });

  it('when Kutt lists its links 50 at most by skip and limit, then each comes with its count and what cannot come over', async () => {
    const many = Array.from({ length: 57 }, (_, i) => ({ ...kuttLinks[0], address: `k${i}`, visit_count: i }));
    const all = [...kuttLinks, ...many];
    stub = await startSourceStub({ header: 'X-API-KEY', value: KUTT_API_KEY }, (path, q) =>
      path === '/api/v2/links'
        ? kuttPage(all, Number(q.get('skip') ?? 0), Math.min(50, Number(q.get('limit') ?? 10)))
        : null,
    );
    const items = await collect(readSource({ source: 'kutt', url: `${stub.url}/`, apiKey: KUTT_API_KEY }));
    expect(items).toHaveLength(60);
    expect(items[0]).toMatchObject({
      code: 'abc123',
      domain: null,
      target: 'https://example.org/docs',
      title: 'Our docs',
      visitCount: 42,
      visits: null,
    });
    expect(items[1]).toMatchObject({ code: 'launch-day', expiresAt: Date.parse('2031-01-01T00:00:00Z') });
    expect(items[1]!.notImported).toEqual([expect.objectContaining({ field: 'password' })]);
    expect(items[2]).toMatchObject({ code: 'promo', domain: 'l.example.org', title: null });
    expect(stub.requests.map((r) => [r.query.get('skip'), r.query.get('limit')])).toEqual([
      ['0', '50'],
      ['50', '50'],
    ]);
  });

  it('when Bitly pages its bitlinks by next URL, then custom back-halves become aliases or links of their own domain', async () => {
    stub = await startSourceStub({ header: 'authorization', value: `Bearer ${BITLY_TOKEN}` }, (path, q) =>
      path === `/v4/groups/${BITLY_GROUP}/bitlinks`
        ? bitlyPage(stub!.url, bitlyLinks, Number(q.get('page') ?? 1), 1)
        : null,
    );
    const items = await collect(
      readSource({ source: 'bitly', url: `${stub.url}/v4/groups/${BITLY_GROUP}`, apiKey: BITLY_TOKEN }),
    );
    expect(items.map((i) => [i.domain, i.code, i.aliases])).toEqual([
      ['bit.ly', '3xYzAbc', ['spring-2022']],
      ['brand.example', 'spring', []],
      ['bit.ly', '4aB', []],
    ]);
    expect(items[0]).toMatchObject({
      target: 'https://example.com/spring',
      title: 'Spring',
      tags: ['seasonal'],
      createdAt: Date.parse('2022-03-01T12:00:00Z'),
    });
    expect(items[2]!.notImported.map((n) => n.field)).toEqual(['archived']);
  });

  it('when a Bitly CSV export is read, then its rows are the same items as the API gives', async () => {
    const items = await collect(readSource({ source: 'bitly', csv: createReadStream(fixture('bitly-export.csv')) }));
    expect(items.map((i) => [i.domain, i.code, i.aliases, i.tags, i.title])).toEqual([
      ['bit.ly', '3xYzAbc', ['spring-2022'], ['seasonal', 'promo'], 'Spring'],
      ['bit.ly', '4aB', [], [], 'Winter, cold'],
    ]);
  });

  it('when a Bitly CSV names its back-halves under Custom Link, then they are aliases or links of their own domain as under the other headers', async () => {
    const items = await collect(
      readSource({ source: 'bitly', csv: createReadStream(fixture('bitly-export-custom-link.csv')) }),
    );
    expect(items.map((i) => [i.domain, i.code, i.target, i.aliases])).toEqual([
      ['bit.ly', '3xYzAbc', 'https://example.com/spring', ['spring-2022', 'spring']],
      ['go.brand.example', 'spring-sale', 'https://example.com/spring', []],
      ['bit.ly', '4aB', 'https://example.com/winter', []],
    ]);
  });

  it('when a Dub CSV export is read, then short link, destination, clicks, creation and tags come over', async () => {
    const items = await collect(readSource({ source: 'dub', csv: createReadStream(fixture('dub-export.csv')) }));
    expect(items.map((i) => [i.domain, i.code, i.target, i.visitCount, i.tags])).toEqual([
      ['dub.sh', 'summer', 'https://example.com/summer', 12, ['sale', 'summer']],
      ['go.brand.example', 'docs-v2', 'https://example.com/docs', 0, []],
    ]);
    expect(items[0]!.createdAt).toBe(Date.parse('2024-05-01T09:30:00.000Z'));
    expect(items[1]!.notImported.map((n) => n.field)).toEqual(['archived']);
  });

  it('when a generic CSV is read, then every documented column is taken and a bad row is reported, not fatal', async () => {
    const items = await collect(readSource({ source: 'csv', csv: createReadStream(fixture('generic.csv')) }));
    expect(items[0]).toMatchObject({
      code: 'gen1',
      domain: null,
      tags: ['news', 'tech'],
      title: 'A title, with comma',
      forwardQuery: true,
      aliases: ['gen-one', 'first-link'],
      createdAt: Date.parse('2024-01-01T00:00:00Z'),
    });
    expect(items[1]).toMatchObject({
      code: '',
      target: 'https://example.com/b?x=1&y=2',
      maxVisits: 5,
      expiresAt: Date.parse('2031-01-01T00:00:00Z'),
    });
    expect(items[2]!.code).toBe('very-long-code-from-elsewhere');
    const entries: SourceEntry[] = [];
    for await (const e of readSource({
      source: 'csv',
      csv: Readable.from(['url,code,max_visits\nhttps://x.example,a,many\n,b,\n']),
    }))
      entries.push(e);
    expect(entries).toEqual([
      { unreadable: true, at: 'line 2', reason: expect.stringMatching(/max_visits/) },
      { unreadable: true, at: 'line 3', reason: expect.stringMatching(/url/) },
    ]);
  });
});
