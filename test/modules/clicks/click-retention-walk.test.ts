import { describe, expect, it } from 'vitest';
import { deleteExpiredClicks } from '../../../src/modules/clicks/click-retention.js';
import { engines, TestClock } from '../../helpers/app.js';
import { createLink } from '../../helpers/factories.js';
import { useUser } from '../../helpers/fixtures.js';
import { DOMAINS, useDomainTestApp } from '../domains/domains.helpers.js';
import { linksOfEachRetention } from './click-retention.helpers.js';
import { UA } from './user-agents.js';

/**
 * SPEC §24's retention, statement by statement (src/modules/clicks/click-retention.ts): the job walks the old
 * records in (clicked_at, id) order, a range of that index per statement, so a statement that ends inside a run
 * of records written at the same instant must leave the rest of the run to the next one, and a record at its
 * cutoff exactly is kept.
 */
const DAY = 86_400_000;
const T0 = Date.parse('2026-06-10T09:00:00.000Z');

describe.each(engines)('click retention, batch by batch, on %s', (engine) => {
  // No CLICK_RETENTION_DAYS: nothing is deleted but by the calls below.
  const d = useDomainTestApp(engine, { clock: new TestClock(T0) });
  const owner = useUser(d);

  type Link = { id: number; short_code: string };
  /** Writes a record of each link at each instant, in turn, as the click writer interleaves them. */
  const write = async (links: Link[], instants: number[]) => {
    for (const at of instants) {
      for (const [i, link] of links.entries()) {
        const click = { linkId: link.id, shortCode: link.short_code, clickedAt: at, ip: `192.0.2.${i}` };
        expect(d.t.app.clickQueue.enqueue({ ...click, userAgent: UA.chromeWindows, referrer: null })).toBe(true);
      }
    }
    await d.t.app.clickQueue.flush();
  };
  const keptTimes = async (link: Link) =>
    (
      await d.t.storage.db
        .selectFrom('clicks')
        .select('clicked_at')
        .where('link_id', '=', link.id)
        .orderBy('clicked_at')
        .execute()
    ).map((r) => Number(r.clicked_at));
  const run = (days: number) =>
    deleteExpiredClicks({
      db: d.t.storage.db,
      clock: d.t.clock,
      days,
      partitioned: false,
      log: { info: () => undefined },
      batch: 2, // the first statement ends inside the first run of equal instants
    });

  it('when one retention applies and a statement ends amid equal instants, then the next deletes the rest; the cutoff stays', async () => {
    const link = await createLink(d.t, { original_url: 'https://example.com/u' }, owner.token);
    const other = await createLink(d.t, { original_url: 'https://example.com/v' }, owner.token);
    const cutoff = T0 - 30 * DAY;
    const old = cutoff - 10 * DAY;
    await write([link, other], [old, old, old, cutoff - 1, cutoff, cutoff + 1]);

    const done = await run(30);

    expect(done.deleted).toBe(2 * 4);
    expect(done.statements).toBeGreaterThan(1);
    expect(await keptTimes(link)).toEqual([cutoff, cutoff + 1]);
    expect(await keptTimes(other)).toEqual([cutoff, cutoff + 1]);
  });

  it('when domains differ and statements end amid equal instants, then each link loses exactly its records past its cutoff', async () => {
    const t = d.t;
    const {
      links,
      created: { forever, longer },
    } = await linksOfEachRetention(t, owner.token, 60);
    const [c30, c60] = [T0 - 30 * DAY, T0 - 60 * DAY];
    const instants = [c60 - DAY, c60 - DAY, c60 - DAY, c60 - 1, c60, c30 - 1, c30 - 1, c30, T0];
    await write(Object.values(links), instants);

    const done = await run(30);

    const within = (cutoff: number) => instants.filter((at) => at >= cutoff);
    expect(await keptTimes(links.instance)).toEqual(within(c30));
    expect(await keptTimes(links.inherits)).toEqual(within(c30));
    expect(await keptTimes(links.longer)).toEqual(within(c60));
    expect(await keptTimes(links.forever)).toEqual(instants);
    expect(done.deleted).toBe(2 * (instants.length - within(c30).length) + (instants.length - within(c60).length));
    expect(done.statements).toBeGreaterThan(1);

    // The app is shared by this file's tests: none keeps its own retention after this one.
    for (const domain of [forever, longer]) {
      const res = await t.request({
        method: 'PATCH',
        url: `${DOMAINS}/${domain.id}`,
        token: owner.token,
        payload: { click_retention_days: null },
      });
      expect(res.status, res.text).toBe(200);
    }
  });
});
