import { describe, expect, it } from 'vitest';
import { openServices } from '../../src/cli/services.js';
import { engines } from '../helpers/app.js';
import { cliEnvFor, runFerry, startFerry } from '../helpers/cli.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { useSourceStub } from '../helpers/source-stub.js';
import { SHLINK_API_KEY, shlinkPage, shlinkVisitsPage } from '../modules/imports/fixtures/shlink.js';

/** 1,100 short URLs in Shlink's shape (fixtures/shlink.ts), link k with k mod 3 visits. */
const LINKS = 1_100;
const shortUrls = Array.from({ length: LINKS }, (_, k) => ({
  shortCode: `i${k}`,
  shortUrl: `https://s.test/i${k}`,
  longUrl: `https://example.com/interrupted/${k}`,
  dateCreated: '2023-01-01T00:00:00+00:00',
  visitsSummary: { total: k % 3, nonBots: k % 3, bots: 0 },
  tags: [],
  meta: { validSince: null, validUntil: null, maxVisits: null },
  domain: null,
  title: null,
  crawlable: false,
  forwardQuery: false,
  hasRedirectRules: false,
}));
const visitsOf = (k: number) =>
  Array.from({ length: k % 3 }, (_, v) => ({
    referer: 'https://news.example/',
    date: `2023-02-0${v + 1}T10:00:00+00:00`,
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
    visitLocation: null,
    potentialBot: false,
    visitedUrl: `https://s.test/i${k}`,
  }));
const expectedVisits = shortUrls.reduce((n, _, k) => n + (k % 3), 0);

/**
 * SPEC §20: an import interrupted (SIGINT to a real `ferry import`) leaves whole batches only, and the same
 * command run again finishes the rest, each link once with all of its visits.
 */
describe.each(engines)('an interrupted ferry import on %s', (engine) => {
  const t = useTestApp(engine);
  useUser(t, { role: 'admin', status: 'active' });
  /**
   * While set, the stub holds back the 7th page of short URLs (links 601-700) until `open`: the first batch (500)
   * is written by then. `reached` resolves when that page is asked for.
   */
  let gate: { open: () => void; opened: Promise<void>; reach: () => void; reached: Promise<void> } | null = null;
  const stub = useSourceStub({ header: 'X-Api-Key', value: SHLINK_API_KEY }, async (path, q) => {
    const page = Number(q.get('page') ?? 1);
    if (path === '/rest/v3/short-urls') {
      if (page === 7 && gate) {
        gate.reach();
        await gate.opened;
      }
      return shlinkPage('shortUrls', shortUrls, page, Number(q.get('itemsPerPage') ?? 10));
    }
    const m = /^\/rest\/v3\/short-urls\/i(\d+)\/visits$/.exec(path);
    return m ? shlinkVisitsPage(visitsOf(Number(m[1])), q) : null;
  });

  async function importedState() {
    const links = await t.storage.db
      .selectFrom('links')
      .select(['id', 'short_code', 'click_count'])
      .where('original_url', 'like', 'https://example.com/interrupted/%')
      .execute();
    const clicks = await t.storage.db
      .selectFrom('clicks')
      .select(['link_id'])
      .where('imported', '=', 1)
      .where('link_id', 'in', links.length ? links.map((l) => l.id) : [0])
      .execute();
    const perLink = new Map<number, number>();
    for (const c of clicks) perLink.set(Number(c.link_id), (perLink.get(Number(c.link_id)) ?? 0) + 1);
    // Whole links only: each one present has every visit of its source item, in records and in its count.
    for (const l of links) {
      const k = Number(l.short_code.slice(1));
      expect([perLink.get(Number(l.id)) ?? 0, Number(l.click_count)]).toEqual([k % 3, k % 3]);
    }
    return { links: links.length, codes: new Set(links.map((l) => l.short_code)).size, clicks: clicks.length };
  }

  it('when SIGINT comes mid-run, then it stops after whole batches, and the same command finishes the rest, each link once', async () => {
    const env = cliEnvFor(t);
    const args = ['import', 'shlink', '--url', stub.url, '--api-key', SHLINK_API_KEY, '--json'];
    let open!: () => void;
    let reach!: () => void;
    gate = {
      open: () => open(),
      opened: new Promise<void>((resolve) => {
        open = resolve;
      }),
      reach: () => reach(),
      reached: new Promise<void>((resolve) => {
        reach = resolve;
      }),
    };
    const run = startFerry(args, env);
    // The 7th page is asked for once the first batch is committed.
    await Promise.race([
      gate.reached,
      run.done.then((r) => {
        throw new Error(`ferry ended early: ${r.stderr}`);
      }),
    ]);
    run.child.kill('SIGINT');
    await run.stderrMatches(/interrupted: stopping after the batch/);
    gate.open();
    gate = null;
    const first = await run.done;
    expect(first.status, first.stderr).toBe(1);
    expect(first.json()).toMatchObject({ state: 'interrupted', items: 500, created: 500 });
    expect(await importedState()).toMatchObject({ links: 500, codes: 500 });

    const second = await runFerry(args, env);
    expect(second.status, second.stderr).toBe(0);
    expect(second.json()).toMatchObject({
      state: 'done',
      items: LINKS,
      created: LINKS - 500,
      unchanged: 500,
      failed: 0,
    });
    expect(await importedState()).toEqual({ links: LINKS, codes: LINKS, clicks: expectedVisits });
  }, 300_000);

  it('when Ctrl-C came before the import began (services opening), then nothing is imported and the job is interrupted', async () => {
    const cli = await openServices(t.config, () => undefined);
    try {
      const before = await importedState();
      const { end, job } = await cli.imports.run(
        { source: 'shlink', url: stub.url, apiKey: SHLINK_API_KEY },
        { signal: AbortSignal.abort() },
      );
      expect(end.state).toBe('interrupted');
      expect(job.state).toBe('interrupted');
      expect(await importedState()).toEqual(before);
    } finally {
      await cli.close();
    }
  });
});
