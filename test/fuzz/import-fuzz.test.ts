import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../helpers/app.js';
import { createUser, type CreatedUser } from '../helpers/factories.js';
import { startSourceStub, type SourceStub } from '../helpers/source-stub.js';
import { SHLINK_API_KEY, shlinkPage, shlinkVisitsPage } from '../modules/imports/fixtures/shlink.js';
import { finishedJob, type ImportJob } from '../modules/imports/imports.helpers.js';

/**
 * SPEC §25, the third hardening: generated hostile rows, as a CSV file and from a Shlink stand-in, are imported;
 * then every read of what came in answers without a 5xx (createTestApp's request() also checks each answer
 * against the OpenAPI document), and every row that did not come in is named in the job with its reason and
 * the API's error code. IMPORT_FUZZ_ROWS rows per source and engine (default 500; `npm run fuzz` sends 10,000).
 */
const ROWS = Number(process.env.IMPORT_FUZZ_ROWS ?? 500);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** Every stored link is read three ways, one request after another: 10,000 rows on PostgreSQL take minutes. */
const TIMEOUT_MS = Math.max(600_000, ROWS * 240);

const hostileText = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\t',
    'line\nbreak',
    'tab\there',
    '\u0000',
    '\u0007bell',
    '\u202eevil',
    '😀',
    'a'.repeat(300),
    '=HYPERLINK("x")',
    "' or 1=1 --",
    '<script>',
    'null',
  ),
);
const hostileDate = fc.oneof(
  { arbitrary: fc.constant(''), weight: 2 },
  {
    arbitrary: fc
      .date({ min: new Date(0), max: new Date(Date.UTC(2100, 0)), noInvalidDate: true })
      .map((d) => d.toISOString()),
    weight: 2,
  },
  fc.constantFrom(
    '',
    '+200000-01-01T00:00:00Z',
    '-000050-01-01T00:00:00Z',
    '0000-00-00 00:00:00',
    'garbage-date',
    '1969-12-31T23:59:59Z',
    '9999-12-31T23:59:59Z',
    '10000-01-01T00:00:00Z',
    '2030-01-01T00:00:00Z',
    '2020-02-30 10:00:00',
    '2021-06-01T12:00:00+14:00',
    '1e309',
    'NaN',
  ),
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
);
const hostileUrl = fc.oneof(
  { arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }), weight: 3 },
  fc.constantFrom(
    'https://login.phish.example/x',
    'http://203.0.113.7/',
    'http://[::ffff:203.0.113.7]/',
    'http://[64:ff9b::203.0.113.7]/',
    'http://[2001:db8::1]/',
    'https://xn--bcher-kva.example/',
    'https://bücher.example/',
    'https://BLOCKED.EXAMPLE./x',
    'javascript:alert(1)',
    'data:text/html,x',
    'http://127.0.0.1:3000/x',
    'http://localhost:3000/abc',
    'http://user:pass@example.com/',
    'https://example.com/\u0000',
    'https://example.com/a b',
    '//example.com',
    'https://',
    `https://example.com/${'p'.repeat(3000)}`,
  ),
);
const hostileCode = fc.oneof(
  { arbitrary: fc.stringMatching(/^[0-9a-zA-Z]{1,8}$/), weight: 2 },
  { arbitrary: fc.stringMatching(/^[0-9a-zA-Z_-]{9,64}$/), weight: 1 },
  fc.constantFrom(
    '',
    'api',
    'docs',
    'Api',
    'x'.repeat(65),
    'ok-slug_1',
    'a b',
    '../x',
    '%20',
    'abc/def',
    '😀',
    'constructor',
    '__proto__',
  ),
  hostileText,
);
const hostileDomain = fc.oneof(
  { arbitrary: fc.constant(''), weight: 3 },
  fc.constantFrom(
    'go.example.com',
    'GO.Example.COM.',
    '127.0.0.1',
    '[::1]',
    'host:8080',
    'single',
    'xn--bcher-kva.example',
    'a..b',
    '-bad-.example',
    'constructor',
  ),
  hostileText,
);
const list = (item: fc.Arbitrary<string>) => fc.array(item, { maxLength: 12 }).map((a) => a.join('|'));

const csvRow = fc.record({
  url: hostileUrl,
  code: hostileCode,
  domain: hostileDomain,
  created_at: hostileDate,
  expires_at: hostileDate,
  tags: list(hostileText),
  title: hostileText,
  max_visits: fc.oneof(fc.constantFrom('', '-5', '0', '1e3', '99999999999999999999', 'many'), fc.nat().map(String)),
  forward_query: fc.constantFrom('', 'true', 'yes', '1', 'no', 'maybe'),
  aliases: list(hostileCode),
});
const shlinkRow = fc.record({
  shortCode: hostileCode,
  longUrl: hostileUrl,
  dateCreated: hostileDate,
  title: fc.option(hostileText),
  domain: fc.option(hostileDomain),
  tags: fc.array(hostileText, { maxLength: 12 }),
  validUntil: fc.option(hostileDate),
  maxVisits: fc.option(fc.oneof(fc.integer(), fc.double())),
  visits: fc.array(
    fc.record({
      date: hostileDate,
      referer: fc.option(hostileText),
      userAgent: fc.option(hostileText),
      country: fc.option(hostileText),
      potentialBot: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
});

const sample = <T>(arb: fc.Arbitrary<T>, n: number, seed: number | undefined): T[] =>
  fc.sample(arb, { numRuns: n, ...(seed !== undefined ? { seed } : {}) });

describe.each(engines)('hostile imports on %s', (engine) => {
  let t: TestApp;
  let admin: CreatedUser;
  let stub: SourceStub;
  const shortUrls = sample(shlinkRow, ROWS, SEED).map((r) => ({
    shortCode: r.shortCode,
    longUrl: r.longUrl,
    dateCreated: r.dateCreated,
    title: r.title,
    domain: r.domain,
    tags: r.tags,
    forwardQuery: false,
    meta: { validSince: null, validUntil: r.validUntil, maxVisits: r.maxVisits },
    visits: r.visits.map((v) => ({
      date: v.date,
      referer: v.referer,
      userAgent: v.userAgent,
      potentialBot: v.potentialBot,
      visitLocation: { countryCode: v.country },
    })),
  }));
  beforeAll(async () => {
    const blocked = path.join(mkdtempSync(path.join(tmpdir(), 'ferry-fuzz-')), 'blocked.txt');
    writeFileSync(blocked, 'phish.example\n203.0.113.7\n[2001:db8::1]\nbücher.example\nblocked.example\n');
    t = await createTestApp(engine, { env: { BLOCKED_HOSTS_FILE: blocked, PUBLIC_BASE_URL: 'http://127.0.0.1:3000' } });
    admin = await createUser(t, { role: 'admin', status: 'active' });
    stub = await startSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, (p, q) => {
      if (p === '/rest/v3/short-urls')
        return shlinkPage('shortUrls', shortUrls, Number(q.get('page') ?? 1), Number(q.get('itemsPerPage') ?? 10));
      const code = decodeURIComponent(/^\/rest\/v3\/short-urls\/(.*)\/visits$/.exec(p)?.[1] ?? '');
      return shlinkVisitsPage(shortUrls.find((s) => s.shortCode === code)?.visits ?? [], q);
    });
  });
  afterAll(async () => {
    await stub?.close();
    await t?.close();
  });

  /** Every item of the job is recorded; each that did not come in says why, with the API's error code. */
  async function everyRejectionNamed(job: ImportJob): Promise<void> {
    const items = await t.storage.db
      .selectFrom('import_items')
      .select(['seq', 'source_ref', 'outcome', 'message', 'error_code'])
      .where('job_id', '=', job.id)
      .execute();
    expect(items).toHaveLength(job.progress.items!);
    for (const item of items.filter((i) => i.outcome === 'failed' || i.outcome === 'conflict')) {
      expect(item.source_ref.length, JSON.stringify(item)).toBeGreaterThan(0);
      expect(item.message, JSON.stringify(item)).toMatch(/\S/);
      expect(item.error_code, JSON.stringify(item)).toMatch(
        /^(VALIDATION_ERROR|DESTINATION_BLOCKED|DOMAIN_NOT_OWNED|CONFLICT)$/,
      );
    }
  }

  /** Every link the admin owns, read every way the API reads a link and its owner: no 5xx, the document kept. */
  async function everyReadAnswers(): Promise<number> {
    let read = 0;
    const links = await t.storage.db
      .selectFrom('links')
      .select(['short_code', 'domain_id'])
      .where('user_id', '=', admin.id)
      .execute();
    const hosts = new Map(
      (await t.storage.db.selectFrom('domains').select(['id', 'hostname']).execute()).map((d) => [
        Number(d.id),
        d.hostname,
      ]),
    );
    for (const l of links) {
      const domain = Number(l.domain_id) === 0 ? '' : `?domain=${hosts.get(Number(l.domain_id))}`;
      for (const url of [
        `/api/v1/links/${l.short_code}${domain}`,
        `/api/v2/links/${l.short_code}${domain}`,
        `/api/v1/links/${l.short_code}/stats${domain}`,
      ]) {
        const res = await t.request({ url, token: admin.token });
        expect(res.status, `${url} ${res.text.slice(0, 300)}`).toBeLessThan(500);
        read += 1;
      }
    }
    for (let cursor: string | null = '', pages = 0; cursor !== null && pages < 200; pages += 1) {
      const res = await t.request({
        url: `/api/v2/users/me/links?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        token: admin.token,
      });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      cursor = res.body.pagination.nextCursor;
    }
    for (const url of [
      '/api/v1/links?limit=100',
      '/api/v1/links?q=a',
      `/api/v1/users/${admin.id}/stats`,
      '/api/v1/domains',
    ]) {
      expect((await t.request({ url, token: admin.token })).status, url).toBeLessThan(500);
    }
    const csv = await t.request({ url: '/api/v1/users/me/links', token: admin.token, headers: { accept: 'text/csv' } });
    expect(csv.status).toBe(200);
    return read;
  }

  it(
    `when ${ROWS} hostile CSV rows and ${ROWS} hostile Shlink links are imported, then every rejection is named and no later read answers 5xx`,
    { timeout: TIMEOUT_MS },
    async () => {
      const rows = sample(csvRow, ROWS, SEED);
      const file = stringify(rows, {
        header: true,
        columns: [
          'url',
          'code',
          'domain',
          'created_at',
          'expires_at',
          'tags',
          'title',
          'max_visits',
          'forward_query',
          'aliases',
        ],
      });
      const csvJob = await finishedJob(
        t,
        await t.request({
          method: 'POST',
          url: '/api/v1/imports?source=csv',
          token: admin.token,
          headers: { 'content-type': 'text/csv' },
          payload: file,
        }),
        admin.token,
      );
      expect(csvJob.state, csvJob.error ?? '').toBe('done');
      expect(csvJob.progress.items).toBe(ROWS);
      const shlinkJob = await finishedJob(
        t,
        await t.request({
          method: 'POST',
          url: '/api/v1/imports',
          token: admin.token,
          payload: { source: 'shlink', url: stub.url, api_key: SHLINK_API_KEY },
        }),
        admin.token,
      );
      expect(shlinkJob.state, shlinkJob.error ?? '').toBe('done');
      expect(shlinkJob.progress.items).toBe(ROWS);
      await everyRejectionNamed(csvJob);
      await everyRejectionNamed(shlinkJob);
      // The rows are hostile, not hopeless: many come in, so that the reads below read what imports stored.
      expect((csvJob.progress.created ?? 0) + (shlinkJob.progress.created ?? 0)).toBeGreaterThan(ROWS / 10);
      expect(await everyReadAnswers()).toBeGreaterThan(0);
    },
  );
});
