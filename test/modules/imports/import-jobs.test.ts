import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createUser } from '../../helpers/factories.js';
import { startSourceStub, type SourceStub } from '../../helpers/source-stub.js';
import { KUTT_API_KEY, kuttLinks, kuttPage } from './fixtures/kutt.js';
import { SHLINK_API_KEY, shlinkPage, shlinkVisitsPage } from './fixtures/shlink.js';
import { finishedJob, type ImportJob } from './imports.helpers.js';

/** A Shlink short URL of the tests below. */
const shortUrl = (code: string) => ({
  shortCode: code,
  shortUrl: `https://s.test/${code}`,
  longUrl: `https://example.com/${code}`,
  dateCreated: '2020-01-01T00:00:00+00:00',
  tags: [],
  meta: { validSince: null, validUntil: null, maxVisits: null },
  domain: null,
  title: null,
  forwardQuery: false,
});
const visitAt = (date: string) => ({
  referer: null,
  date,
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0',
  visitLocation: null,
  potentialBot: false,
});

/** n visits a minute apart from 2021-01-01, oldest first. */
const history = (n: number) =>
  Array.from({ length: n }, (_, i) => visitAt(new Date(Date.UTC(2021, 0, 1) + i * 60_000).toISOString()));

/** A Shlink stand-in whose visit pages can be held back: `hold(path, page)` answers once `release()` is called. */
function holdableShlink(links: () => Array<ReturnType<typeof shortUrl>>, visits: Record<string, unknown[]>) {
  let held: { page: number; nth: number; reached: () => void; released: Promise<void> } | null = null;
  const control = {
    /** Holds the `nth` request for visit page `page`; `arrived` resolves when it comes. */
    hold(page: number, nth = 1) {
      let reached!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((r) => (reached = r));
      held = { page, nth, reached, released: new Promise<void>((r) => (release = r)) };
      return { arrived, release };
    },
  };
  const route = async (path: string, q: URLSearchParams) => {
    if (path === '/rest/v3/short-urls')
      return shlinkPage('shortUrls', links(), Number(q.get('page') ?? 1), Number(q.get('itemsPerPage') ?? 10));
    const m = /^\/rest\/v3\/short-urls\/([^/]+)\/visits$/.exec(path);
    if (!m) return null;
    const h = held;
    if (h && Number(q.get('page') ?? 1) === h.page && --h.nth === 0) {
      held = null;
      h.reached();
      await h.released;
    }
    return shlinkVisitsPage(visits[m[1]!] ?? [], q);
  };
  return { control, route };
}

describe.each(engines)('import jobs on %s', (engine) => {
  let stub: SourceStub | undefined;
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });
  const startShlink = (url: string) =>
    t.request({
      method: 'POST',
      url: '/api/v1/imports',
      token: admin.token,
      payload: { source: 'shlink', url, api_key: SHLINK_API_KEY },
    });

  it('when the source holds an answer back in the middle of a long history, then the API writes, /readyz stays ready, and the job goes on after', async () => {
    const visits = { long1: history(52_123) };
    const shlink = holdableShlink(() => [shortUrl('long1')], visits);
    stub = await startSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, shlink.route);
    // Pages of 1,000 are read from the oldest (the last, 53) on, page 1 first of all (for the count): the batch of
    // 50,000 fills within page 3, so page 2 is asked for after the batch was written, as the history goes on.
    const gate = shlink.control.hold(2);
    const started = await startShlink(stub.url);
    await gate.arrived;
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: admin.token,
      payload: { original_url: 'https://example.com/while-importing' },
    });
    expect(created.status, created.text).toBe(201);
    expect((await t.request({ url: '/readyz' })).status).toBe(200);
    gate.release();
    const job = await finishedJob(t, started, admin.token);
    expect(job).toMatchObject({ state: 'done', progress: { created: 1, visits: 52_123 } });
    const stats = await t.request({
      url: '/api/v1/links/long1/stats?from=2021-01-01T00:00:00Z&to=2021-03-01T00:00:00Z',
      token: admin.token,
    });
    expect(stats.body.total_clicks).toBe(52_123);
  });

  it('when a running import is cancelled, then it stops as cancelled with what it committed whole; an ended one answers 409', async () => {
    // cut1's 2,500 visits are pages 1 (read first, for the count), 3, 2 (held here) and 1 of 1,000.
    const visits = { cut1: history(2_500), cut2: history(5) };
    const shlink = holdableShlink(() => [shortUrl('cut1'), shortUrl('cut2')], visits);
    stub = await startSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, shlink.route);
    const gate = shlink.control.hold(2);
    const started = await startShlink(stub.url);
    await gate.arrived;
    const cancelled = await t.request({
      method: 'DELETE',
      url: started.headers.location as string,
      token: admin.token,
    });
    gate.release();
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ state: 'cancelled', error: expect.stringMatching(/cancelled/) });
    expect(
      (await t.request({ method: 'DELETE', url: started.headers.location as string, token: admin.token })).status,
    ).toBe(409);
    expect((await t.request({ method: 'DELETE', url: '/api/v1/imports/999999', token: admin.token })).status).toBe(404);
    // Nothing half-written: no link of the item it was reading, or the whole link (its code, its record).
    const links = await t.storage.db
      .selectFrom('links')
      .select(['short_code'])
      .where('original_url', 'like', 'https://example.com/cut%')
      .execute();
    expect(links.map((l) => l.short_code)).not.toContain('cut2');
  });

  it('when a source answers more than IMPORT_MAX_RESPONSE_BYTES, then the job fails saying so, and nothing was held', async () => {
    const padded = kuttLinks.map((l) => ({ ...l, description: 'x'.repeat(3000) }));
    stub = await startSourceStub({ header: 'X-API-KEY', value: KUTT_API_KEY }, (path, q) =>
      path === '/api/v2/links' ? kuttPage(padded, Number(q.get('skip') ?? 0), 50) : null,
    );
    const small = await createTestApp(engine, { env: { IMPORT_MAX_RESPONSE_BYTES: '4096' } });
    try {
      const owner = await createUser(small, { role: 'admin', status: 'active' });
      const started = await small.request({
        method: 'POST',
        url: '/api/v1/imports',
        token: owner.token,
        payload: { source: 'kutt', url: stub.url, api_key: KUTT_API_KEY },
      });
      const job = await finishedJob(small, started, owner.token);
      expect(job).toMatchObject({
        state: 'failed',
        error: expect.stringMatching(/answered more than 4096 bytes \(IMPORT_MAX_RESPONSE_BYTES\)/),
      });
      expect(job.progress.items).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('when a job was running in a process that died, then the sweep shows it interrupted, saying how to go on', async () => {
    const row = await t.storage.db
      .insertInto('import_jobs')
      .values({
        source: 'csv',
        source_key: 'csv:csv#owner=1',
        options: '{}',
        owner_id: admin.id,
        created_by: admin.id,
        state: 'running',
        dry_run: 0,
        on_conflict: 'skip',
        error: null,
        created_at: Date.now() - 600_000,
        updated_at: Date.now() - 600_000,
        finished_at: null,
        heartbeat_at: Date.now() - 600_000,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.app.runJob('sweep-interrupted-imports');
    const job = (await t.request({ url: `/api/v1/imports/${row.id}`, token: admin.token })).body as ImportJob;
    expect(job).toMatchObject({ state: 'interrupted', error: expect.stringMatching(/start the same import again/) });
  });

  it('when visits are dated outside 1970-9999 or cannot be read, then they are skipped and counted, and statistics answer', async () => {
    const visits = {
      odd1: [
        visitAt('+200000-01-01T00:00:00+00:00'),
        visitAt('-000050-01-01T00:00:00+00:00'),
        visitAt('garbage-date'),
        visitAt('2022-05-01T10:00:00+00:00'),
      ],
    };
    const shlink = holdableShlink(() => [shortUrl('odd1')], visits);
    stub = await startSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, shlink.route);
    const job = await finishedJob(t, await startShlink(stub.url), admin.token);
    // The visit of +200000 lies after the run's start, past the endDate the reader asks for (as Shlink filters):
    // it never comes; the two it does get and cannot date are skipped and counted.
    expect(job).toMatchObject({ state: 'done', progress: { created: 1, visits: 1, visits_skipped: 2 } });
    for (const url of [
      '/api/v1/links/odd1/stats',
      '/api/v1/links/odd1/stats?from=2022-01-01T00:00:00Z&to=2023-01-01T00:00:00Z',
      `/api/v1/users/${admin.id}/stats`,
      '/api/v1/links/odd1/clicks',
    ]) {
      expect((await t.request({ url, token: admin.token })).status, url).toBe(200);
    }
  });
});
