import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, engines, freshPostgresDatabase, type TestApp } from '../../helpers/app.js';
import { missing, unless } from '../../helpers/skip.js';
import {
  countingOutbound,
  eventually,
  resolverOf,
  RunningClock,
  startDestination,
  type Destination,
} from './link-checks.helpers.js';

/** Links straight into the table (the checker reads only links): `count` links over `hosts` host names. */
async function insertLinks(t: TestApp, count: number, hosts: number, port: number): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < count; i += 500) {
    const rows = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({
      short_code: `r${i + j}`,
      original_url: `http://h${(i + j) % hosts}.test:${port}/page/${i + j}`,
      user_id: null,
      created_at: now,
      updated_at: now,
    }));
    await t.storage.db.insertInto('links').values(rows).execute();
  }
}

const checkedCount = async (t: TestApp): Promise<number> =>
  Number(
    (
      await t.storage.db
        .selectFrom('links')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('health_checked_at', 'is not', null)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** The most starts in any window of `windowMs` (starts sorted). */
function mostInWindow(starts: readonly number[], windowMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i += 1) {
    while (sorted[i]! - sorted[j]! >= windowMs) j += 1;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

const names = (hosts: number) =>
  Object.fromEntries(Array.from({ length: hosts }, (_, i) => [`h${i}.test`, ['127.0.0.1']]));

/**
 * SPEC §24's bounds, scaled down (bench/link-checks.ts runs 100,000 links to 1,000 hosts): 2,000 links to 50 hosts
 * on a loopback server answering in 20 ms, at 6,000 checks a minute (a spacing of 10 ms: 20 s for all, below what
 * a loaded 2-core machine manages, so the rate is what binds), an interval of 180 s (a loaded machine ran the round in 20 to 85 s).
 */
describe.each(engines)('destination checks at scale (%s)', (engine) => {
  const apps: TestApp[] = [];
  let dest: Destination | null = null;
  afterEach(async () => {
    for (const a of apps.splice(0)) await a.close();
    await dest?.close();
  });

  it('when 2,000 links point at 50 hosts, then all are checked within one interval at the rate, never two requests at once on a host', async () => {
    dest = await startDestination((_req, res) => res.writeHead(200).end('ok'), 20);
    const outbound = countingOutbound(resolverOf(names(50)));
    const perMinute = 6_000;
    const t = await createTestApp(engine, {
      clock: new RunningClock(),
      env: {
        LINK_CHECKS: 'true',
        LINK_CHECKS_PER_MINUTE: String(perMinute),
        LINK_CHECK_INTERVAL_HOURS: '0.05',
        LINK_CHECK_ALLOW_PRIVATE: 'true',
      },
      deps: { linkChecks: { outbound, sliceMs: 2_000 } },
    });
    apps.push(t);
    const began = Date.now();
    await insertLinks(t, 2_000, 50, dest.port);
    await eventually(async () => (await checkedCount(t)) === 2_000, 180_000);
    expect(Date.now() - began).toBeLessThan(180_000);
    expect(dest.maxInFlightPerHost()).toBe(1);
    expect(new Set(dest.requests.map((r) => r.path)).size).toBe(2_000);
    // the rate: any window holds at most its share of LINK_CHECKS_PER_MINUTE (1 s here: 100), +1 for timer jitter
    expect(mostInWindow(outbound.starts, 1_000)).toBeLessThanOrEqual(perMinute / 60 + 1);
    expect(mostInWindow(outbound.starts, 10_000)).toBeLessThanOrEqual(perMinute / 6 + 1);
  }, 240_000);
});

describe.skipIf(missing.postgres !== null)(unless(missing.postgres, 'destination checks on two instances'), () => {
  const apps: TestApp[] = [];
  let dest: Destination | null = null;
  afterEach(async () => {
    for (const a of apps.splice(0)) await a.close();
    await dest?.close();
  });

  it('when two instances share the database, then each check runs once, on one of them', async () => {
    dest = await startDestination((_req, res) => res.writeHead(200).end('ok'), 5);
    const db = await freshPostgresDatabase();
    try {
      const env = {
        LINK_CHECKS: 'true',
        LINK_CHECKS_PER_MINUTE: '60000',
        LINK_CHECK_ALLOW_PRIVATE: 'true',
      };
      const outbounds = [countingOutbound(resolverOf(names(10))), countingOutbound(resolverOf(names(10)))];
      for (const outbound of outbounds)
        apps.push(
          await createTestApp('postgres', {
            databaseUrl: db.url,
            clock: new RunningClock(),
            env,
            deps: { linkChecks: { outbound, sliceMs: 300 } },
          }),
        );
      await insertLinks(apps[0]!, 300, 10, dest.port);
      // What is asserted is that no check runs twice, not how fast: the wait is as long as a loaded CI machine
      // needs (the last failure here was this wait's old 20 s bound while the rest of the suite ran beside it).
      await eventually(async () => (await checkedCount(apps[0]!)) === 300, 150_000);
      await eventually(
        async () =>
          outbounds.every((o) => o.starts.length > 0) ||
          outbounds[0]!.starts.length + outbounds[1]!.starts.length >= 300,
      );
      // … and no link was asked for twice
      expect(dest.requests.length).toBe(300);
      expect(new Set(dest.requests.map((r) => r.path)).size).toBe(300);
      expect(outbounds[0]!.starts.length + outbounds[1]!.starts.length).toBe(300);
    } finally {
      for (const a of apps.splice(0)) await a.close();
      await db.drop();
    }
  }, 240_000);
});
