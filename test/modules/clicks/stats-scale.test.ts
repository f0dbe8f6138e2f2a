import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { clickWriterFor } from '../../../src/modules/clicks/click-ingest.js';
import { createTestApp, engines, TestClock, type TestApp } from '../../helpers/app.js';
import { UA } from './user-agents.js';
import { createLink } from '../../helpers/factories.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const DAYS = 30;
const BIG = 1_000_000;
const BATCH = 10_000;

// Two browsers and two bots: the new dimensions (SPEC §15) are derived for every one of the million clicks.
const AGENTS = [UA.chromeWindows, UA.safariIphone, UA.googlebot, UA.curl];
const COUNTRIES = ['DE', 'FR', null];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * The contract: a stats request costs the same for 10 clicks or a million (SPEC §6). The big link's clicks
 * are written through the same repository method the click worker uses, in large batches; they spread over
 * 30 days, 1,000 addresses, 3 referrers and 4 user agents.
 * Seeding is most of this file's time, and the writer's own cost: measured at about 50 s of CPU on SQLite (its
 * thread writes each click's record and its link.clicked event; batches of 10,000 or 500,000 alike) and 100 s on
 * PostgreSQL, mostly in the database server, on a shared 2-core machine.
 */
describe.each(engines)('statistics cost at scale on %s', (engine) => {
  let t: TestApp;
  let small: { id: number; short_code: string };
  let big: { id: number; short_code: string };

  beforeAll(async () => {
    t = await createTestApp(engine, { clock: new TestClock(T0) });
    const create = async () => await createLink(t, { original_url: 'https://example.com/scale' });
    small = await create();
    big = await create();
    const repository = clickWriterFor(t.storage);
    const writer = repository.writer;
    const event = (link: typeof big, i: number, n: number): ClickEvent => ({
      linkId: link.id,
      shortCode: link.short_code,
      clickedAt: T0 + Math.floor((i / n) * DAYS * 86_400_000),
      ip: `10.0.${(i % 1000) >> 8}.${(i % 1000) & 255}`,
      userAgent: AGENTS[i % 4]!,
      country: COUNTRIES[i % 3]!,
      referrer: `https://ref${i % 3}.example/page`,
    });
    await writer.write(Array.from({ length: 10 }, (_, i) => event(small, i, 10)));
    for (let start = 0; start < BIG; start += BATCH) {
      await writer.write(Array.from({ length: BATCH }, (_, k) => event(big, start + k, BIG)));
    }
    await repository.close();
    // Fold the seeding's write-ahead log into the database first: the measurement is about stats, not about
    // a checkpoint of a million fresh rows running beside it.
    t.storage.sqlite?.pragma('wal_checkpoint(TRUNCATE)');
    t.clock.ms = T0 + DAYS * 86_400_000;
  }, 600_000);
  afterAll(async () => t?.close(), 120_000);

  it('when a link has 1,000,000 click records, then its stats answer about as fast as for a link with 10', async () => {
    const records = await t.storage.db
      .selectFrom('clicks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('link_id', '=', big.id)
      .executeTakeFirstOrThrow();
    expect(Number(records.n)).toBe(BIG);

    // Timed through app.inject (the contract check of t.request is left out of the measurement).
    const time = async (code: string, query: string) => {
      const started = performance.now();
      const res = await t.app.inject({ url: `/api/v1/links/${code}/stats${query}` });
      const ms = performance.now() - started;
      expect(res.statusCode).toBe(200);
      return ms;
    };
    for (const query of ['', '?interval=hour']) {
      for (let i = 0; i < 3; i += 1) {
        await time(small.short_code, query);
        await time(big.short_code, query);
      } // warm up
      const smallMs: number[] = [];
      const bigMs: number[] = [];
      for (let i = 0; i < 21; i += 1) {
        smallMs.push(await time(small.short_code, query));
        bigMs.push(await time(big.short_code, query));
      }
      const bigBody = (await t.request({ url: `/api/v1/links/${big.short_code}/stats${query}` })).body as Record<
        string,
        unknown
      >;
      process.stdout.write(
        `stats medians ${engine} ${query || '?interval=day'}: 10 clicks ${median(smallMs).toFixed(2)} ms, 1M clicks ${median(bigMs).toFixed(2)} ms\n`,
      );
      // Addresses i % 1000 and agents i % 4: the humans (i % 4 < 2) come from 500 addresses.
      expect(bigBody).toMatchObject({
        total_clicks: BIG,
        click_count: BIG,
        human_clicks: BIG / 2,
        bot_clicks: BIG / 2,
        unique_visitors: 500,
      });
      expect((bigBody.top_user_agents as unknown[]).length).toBe(2);
      expect(bigBody.top_devices).toEqual([
        { value: 'desktop', clicks: BIG / 4 },
        { value: 'mobile', clicks: BIG / 4 },
      ]);
      expect((bigBody.top_countries as Array<{ value: string }>).map((c) => c.value).sort()).toEqual([
        '(unknown)',
        'DE',
        'FR',
      ]);
      // Generous: the same order of cost, not a benchmark.
      expect(
        median(bigMs),
        `median ${median(bigMs).toFixed(2)} ms vs ${median(smallMs).toFixed(2)} ms (${query || 'day'})`,
      ).toBeLessThan(3 * median(smallMs) + 5);
    }
  }, 120_000);
});
