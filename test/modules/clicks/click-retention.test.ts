import { describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { createClickPartitions, partitionName, monthStart } from '../../../src/db/click-partitions.js';
import { deleteExpiredClicks } from '../../../src/modules/clicks/click-retention.js';
import { createTestApp, engines, TestClock } from '../../helpers/app.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createLink, recordCount } from '../../helpers/factories.js';
import { useUser } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/scale-out.js';
import { unless } from '../../helpers/skip.js';
import { addDomain, DOMAINS, useDomainTestApp } from '../domains/domains.helpers.js';
import { linksOfEachRetention } from './click-retention.helpers.js';
import { UA } from './user-agents.js';

/**
 * SPEC §24: CLICK_RETENTION_DAYS deletes older click records (at start-up, then daily: the `click-retention`
 * job), a domain's click_retention_days overrides it for its links (null: the instance's, 0: forever), and the
 * statistics, counts and rollups stay as they were.
 */
const DAY = 86_400_000;
const T0 = Date.parse('2026-06-10T09:00:00.000Z');

describe.each(engines)('click retention on %s', (engine) => {
  const d = useDomainTestApp(engine, { clock: new TestClock(T0), env: { CLICK_RETENTION_DAYS: '30' } });
  const owner = useUser(d);

  /** Clicks of `link` `daysAgo` days before now, as the redirect enqueues them: humans from several addresses. */
  const clicksAt = async (link: { id: number; short_code: string }, daysAgo: number[]) => {
    const t = d.t;
    for (const [i, ago] of daysAgo.entries()) {
      const at = t.clock.now() - ago * DAY;
      const click = { linkId: link.id, shortCode: link.short_code, clickedAt: at, ip: `198.51.100.${i}` };
      expect(t.app.clickQueue.enqueue({ ...click, userAgent: UA.chromeWindows, referrer: null, country: 'NL' })).toBe(
        true,
      );
    }
    await t.app.clickQueue.flush();
  };
  const statsOf = async (code: string, domain?: string) => {
    const query = domain ? `?domain=${domain}&tz=Europe/Paris` : '?tz=Europe/Paris';
    const res = await d.t.request({ url: `/api/v1/links/${code}/stats${query}`, token: owner.token });
    expect(res.status, res.text).toBe(200);
    return res.body as Record<string, unknown>;
  };
  const userStats = async () =>
    (await d.t.request({ url: '/api/v1/users/me/stats', token: owner.token })).body as Record<string, unknown>;
  const ages = [400, 200, 100, 45, 31, 29, 1, 0];

  it("when records pass their link's retention, then the job deletes exactly those, per domain, and every statistic stays the same", async () => {
    const t = d.t;
    const {
      links,
      domains: domainOf,
      created: { forever },
    } = await linksOfEachRetention(t, owner.token, 150);
    for (const link of Object.values(links)) await clicksAt(link, ages);
    const before = await Promise.all(
      Object.entries(links).map(([k, l]) => statsOf(l.short_code, domainOf[k as keyof typeof domainOf])),
    );
    const mineBefore = await userStats();

    await t.app.runJob('click-retention');

    const kept = async (link: { id: number }) => recordCount(t, link.id);
    expect(await kept(links.instance)).toBe(3); // 29, 1 and 0 days old: within 30
    expect(await kept(links.inherits)).toBe(3); // null: the instance's 30
    expect(await kept(links.forever)).toBe(ages.length); // 0: forever
    expect(await kept(links.longer)).toBe(6); // 150 days: all but 400 and 200
    const after = await Promise.all(
      Object.entries(links).map(([k, l]) => statsOf(l.short_code, domainOf[k as keyof typeof domainOf])),
    );
    expect(after).toEqual(before);
    expect(before[0]).toMatchObject({ total_clicks: ages.length, unique_visitors: ages.length });
    expect(await userStats()).toEqual(mineBefore);
    const listed = await t.request({ url: `/api/v1/links/${links.instance.short_code}/clicks`, token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(3);

    // A domain that stops keeping its clicks forever takes the instance's value at the next run.
    const patched = await t.request({
      method: 'PATCH',
      url: `${DOMAINS}/${forever.id}`,
      token: owner.token,
      payload: { click_retention_days: null },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.click_retention_days).toBeNull();
    await t.app.runJob('click-retention');
    expect(await kept(links.forever)).toBe(3);
    expect(await kept(links.longer)).toBe(6);
  });

  it('when many records are past, then they are deleted in several bounded statements', async () => {
    const t = d.t;
    const link = await createLink(t, { original_url: 'https://example.com/b' }, owner.token);
    await clicksAt(link, [90, 80, 70, 60, 50, 5]);
    const run = await deleteExpiredClicks({
      db: t.storage.db,
      clock: t.clock,
      days: 30,
      partitioned: false,
      log: { info: () => undefined },
      batch: 2,
    });
    expect(run.deleted).toBeGreaterThanOrEqual(5);
    expect(run.statements).toBeGreaterThan(1);
    expect(await recordCount(t, link.id)).toBe(1);
  });

  it('when retentions differ by domain and the records interleave, then small statements walk them all and delete exactly the past ones', async () => {
    const t = d.t;
    const forever = await addDomain(t, owner.token, { click_retention_days: 0 });
    const longer = await addDomain(t, owner.token, { click_retention_days: 60 });
    const links = [
      await createLink(t, { original_url: 'https://example.com/w1' }, owner.token),
      await createLink(t, { original_url: 'https://example.com/w2', domain: forever.hostname }, owner.token),
      await createLink(t, { original_url: 'https://example.com/w3', domain: longer.hostname }, owner.token),
    ];
    // Written in time order, a record of each link in turn (as a writer interleaves them), some at the same instant.
    const t0 = t.clock.now();
    for (const ago of [90, 75, 75, 45, 45, 35, 10]) {
      for (const [i, link] of links.entries()) {
        const click = { linkId: link.id, shortCode: link.short_code, clickedAt: t0 - ago * DAY, ip: `192.0.2.${i}` };
        t.app.clickQueue.enqueue({ ...click, userAgent: UA.chromeWindows, referrer: null });
      }
    }
    await t.app.clickQueue.flush();
    const run = await deleteExpiredClicks({
      db: t.storage.db,
      clock: t.clock,
      days: 30,
      partitioned: false,
      log: { info: () => undefined },
      batch: 2,
    });
    expect(await recordCount(t, links[0]!.id)).toBe(1); // 30 days: only the 10-day-old one
    expect(await recordCount(t, links[1]!.id)).toBe(7); // forever
    expect(await recordCount(t, links[2]!.id)).toBe(4); // 60 days: 45, 45, 35 and 10
    expect(run.deleted).toBe(6 + 3);
    expect(run.statements).toBeGreaterThan(1);
    // The app is shared by this file's tests: the next ones expect no domain keeping its clicks forever.
    const patched = await t.request({
      method: 'PATCH',
      url: `${DOMAINS}/${forever.id}`,
      token: owner.token,
      payload: { click_retention_days: null },
    });
    expect(patched.status, patched.text).toBe(200);
  });

  it('when CLICK_RETENTION_DAYS and every domain keep clicks forever, then nothing is deleted', async () => {
    const t = d.t;
    const run = await deleteExpiredClicks({
      db: t.storage.db,
      clock: t.clock,
      days: 0,
      partitioned: false,
      log: { info: () => undefined },
    });
    expect(run.deleted).toBe(0);
  });

  it('when click_retention_days is sent, then it is stored and read back on v1 and v2; bad values are a validation error', async () => {
    const t = d.t;
    const created = await addDomain(t, owner.token, { click_retention_days: 90 });
    const read = await t.request({ url: `${DOMAINS}/${created.id}`, token: owner.token });
    expect(read.body.click_retention_days).toBe(90);
    const v2 = await t.request({ url: `/api/v2/domains/${created.id}`, token: owner.token });
    expect(v2.status).toBe(200);
    expect(v2.body.clickRetentionDays).toBe(90);
    const patched = await t.request({
      method: 'PATCH',
      url: `/api/v2/domains/${created.id}`,
      token: owner.token,
      payload: { clickRetentionDays: 7 },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.clickRetentionDays).toBe(7);
    expect((await addDomain(t, owner.token)) as unknown as Record<string, unknown>).toMatchObject({
      click_retention_days: null,
    });
    for (const bad of [-1, 36_501, 1.5, '30', true]) {
      const res = await t.request({
        method: 'PATCH',
        url: `${DOMAINS}/${created.id}`,
        token: owner.token,
        payload: { click_retention_days: bad },
      });
      expectEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(JSON.stringify(res.body.error.details)).toContain('click_retention_days');
    }
  });

  it.runIf(engine === 'postgres')(
    unless(
      engine === 'postgres' ? null : 'PostgreSQL only (monthly partitions)',
      'when a whole month is past every retention in use, then its partition is dropped; a month not wholly past stays',
    ),
    async () => {
      const t = d.t;
      const link = await createLink(t, { original_url: 'https://example.com/p' }, owner.token);
      const old = t.clock.now() - 400 * DAY;
      const db = t.storage.db as unknown as Kysely<unknown>;
      await db.transaction().execute((tx) => createClickPartitions(tx, t.clock.now(), [old]));
      await clicksAt(link, [400, 10]);
      const run = await deleteExpiredClicks({
        db: t.storage.db,
        clock: t.clock,
        days: 30,
        partitioned: true,
        log: { info: () => undefined },
      });
      expect(run.droppedPartitions).toContain(partitionName(monthStart(old)));
      expect(run.droppedPartitions).not.toContain(partitionName(monthStart(t.clock.now())));
      expect(await recordCount(t, link.id)).toBe(1);
    },
  );

  it('when an instance starts with CLICK_RETENTION_DAYS set, then the records already past it are deleted at start-up', async () => {
    const first = await createTestApp(engine, { clock: new TestClock(T0) });
    let second: Awaited<ReturnType<typeof createTestApp>> | null = null;
    try {
      const link = await createLink(first, { original_url: 'https://example.com/s' });
      for (const ago of [90, 60, 1]) {
        const click = { linkId: link.id, shortCode: link.short_code, clickedAt: T0 - ago * DAY, ip: '192.0.2.1' };
        first.app.clickQueue.enqueue({ ...click, userAgent: UA.chromeWindows, referrer: null });
      }
      await first.app.close();
      expect(await recordCount(first, link.id)).toBe(3);
      second = await createTestApp(engine, {
        clock: new TestClock(T0),
        dataDir: first.config.dataDir,
        ...(first.config.databaseUrl ? { databaseUrl: first.config.databaseUrl } : {}),
        env: { CLICK_RETENTION_DAYS: '30' },
      });
      const started = second;
      await waitFor('the start-up retention run', async () => (await recordCount(started, link.id)) === 1);
    } finally {
      await second?.close();
      await first.close();
    }
  });
});
