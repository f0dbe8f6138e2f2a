import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import type { ClickWriter } from '../../../src/modules/clicks/rollups/click-writer.js';
import { createPgClickWriter } from '../../../src/modules/clicks/rollups/pg-click-writer.js';
import { createReplaySafeClickWriter } from '../../../src/modules/clicks/rollups/replay-safe-click-writer.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';
import { waitFor } from '../../helpers/scale-out.js';
import { missing, unless } from '../../helpers/skip.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const BROWSERS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v}.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) ' +
    'Version/{v}.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (X11; Linux x86_64; rv:{v}.0) Gecko/20100101 Firefox/{v}.0',
];

type Link = { id: number; short_code: string };

/** Two links of a user (the per-user rollups), an anonymous one, and a third deleted while its clicks wait. */
async function links(t: TestApp): Promise<Link[]> {
  const owner = await createUser(t);
  const create = async (n: number, owned: boolean) => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: `https://example.com/${n}` },
      ...(owned ? { token: owner.token } : {}),
    });
    expect(res.status, res.text).toBe(201);
    return res.body as Link;
  };
  const all = [await create(1, true), await create(2, true), await create(3, false), await create(4, false)];
  await t.storage.db.deleteFrom('links').where('id', '=', all[3]!.id).execute();
  return all;
}

/** Every row the records and rollups hold, without generated ids, in a stable order. */
async function snapshot(t: TestApp): Promise<Record<string, unknown[]>> {
  const q = async (text: string) => (await sql.raw(text).execute(t.storage.db)).rows;
  return {
    clicks: await q(
      'select link_id, short_code, clicked_at, ip, user_agent, referrer, click_key, is_bot, browser, os, device, ' +
        'country, imported, alias, domain, rule_id, variant_id from clicks order by link_id, clicked_at, ip, user_agent, referrer',
    ),
    links: await q(
      'select id, click_count, bot_clicks, unique_visitors, first_click_at, last_click_at from links order by id',
    ),
    hourly: await q('select * from link_click_hourly order by link_id, hour_start'),
    visitors: await q('select * from link_visitors order by link_id, ip'),
    daily: await q('select * from link_click_daily_values order by link_id, kind, day_start, value'),
    userHourly: await q('select * from user_click_hourly order by user_id, hour_start'),
    userDaily: await q('select * from user_click_daily_values order by user_id, kind, day_start, value'),
    choices: await q('select * from link_click_daily_choices order by link_id, day_start, kind, value, visitor'),
  };
}

/** The same clicks through the set writer on one PostgreSQL app and the plan row by row on another; both apps' rows. */
async function onBothWriters(write: (links: Link[], writers: ClickWriter[]) => Promise<void>) {
  const env = { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' };
  const a = await createTestApp('postgres', { env });
  const b = await createTestApp('postgres', { env });
  try {
    const [la, lb] = [await links(a), await links(b)];
    expect(la.map((l) => l.id)).toEqual(lb.map((l) => l.id));
    await write(la, [createPgClickWriter(a.storage), createPgClickWriter(b.storage, { sets: false })]);
    return { sets: await snapshot(a), rows: await snapshot(b) };
  } finally {
    await a.close();
    await b.close();
  }
}

/** The i-th click of `link` as the stream carries it (its own key), a millisecond after the one before. */
const keyedClick = (link: Link, i: number, userAgent: string): ClickEvent => ({
  linkId: link.id,
  shortCode: link.short_code,
  clickedAt: T0 + i,
  ip: `10.2.0.${i}`,
  userAgent,
  referrer: null,
  key: randomUUID(),
});

const bothWrite = async (writers: ClickWriter[], events: ClickEvent[]) => {
  for (const w of writers) await w.write(events);
};

describe.skipIf(missing.postgres !== null)(unless(missing.postgres, 'the PostgreSQL set writer'), () => {
  it('when batches mix links, hours, addresses, referrers, agents, bots and a deleted link, then sets and plan agree', async () => {
    const { sets, rows } = await onBothWriters(async (la, writers) => {
      const referrers = [
        null,
        '',
        'https://News.Example:443/a?b',
        'http://x.example:8080/p',
        'android-app://com.example',
        'not a url',
        'https://r.example/',
      ];
      const events: ClickEvent[] = [];
      for (let i = 0; i < 2000; i += 1) {
        const link = la[[0, 1, 2, 3][i % 4]!]!;
        events.push({
          linkId: link.id,
          shortCode: link.short_code,
          clickedAt: T0 + i * 20_000,
          ip: i % 5 === 0 ? null : `10.0.${i % 7}.${i % 11}`,
          // 130 distinct agents a day on a link: past the cap of 100, the rest is "(other)", for the link and its owner.
          userAgent:
            i % 9 === 0
              ? null
              : i % 4 < 2 && i % 3 === 0
                ? `Agent/${i % 130}${'x'.repeat(i % 2 ? 300 : 0)}`
                : BROWSERS[i % 3]!.replace('{v}', String(100 + (i % 10))),
          country: ['DE', null, 'FR', 'JP'][i % 4]!,
          ...(i % 6 === 0 ? { visitor: `h:${i % 13}` } : {}),
          ...(i % 10 === 0 ? { alias: `al${i % 3}`, domain: 'go.example' } : {}),
          // What routed the visit (SPEC §21): a rule, a rule and its split's variant, or nothing.
          ...(i % 5 !== 4 ? { ruleId: `r${i % 3}` } : {}),
          ...(i % 5 === 1 ? { variantId: `v${i % 2}` } : {}),
          referrer: i % 2 === 1 ? `https://site${i}.example/path` : referrers[i % referrers.length]!,
          key: randomUUID(),
        });
      }
      for (let i = 0; i < events.length; i += 400) await bothWrite(writers, events.slice(i, i + 400));
    });
    expect(sets.clicks!.length).toBe(1500); // the deleted link's 500 clicks are dropped
    expect(new Set((sets.userDaily as Array<{ kind: string }>).map((r) => r.kind))).toEqual(
      new Set(['referrer', 'user_agent', 'browser', 'os', 'device', 'country', 'link']),
    );
    expect((sets.daily as Array<{ value: string }>).some((r) => r.value === '(other)')).toBe(true);
    const choices = sets.choices as Array<{ kind: string; visitor: string }>;
    expect(new Set(choices.map((r) => r.kind))).toEqual(new Set(['rule', 'variant']));
    expect(choices.some((r) => r.visitor === '')).toBe(true); // humans without an address
    expect(sets).toEqual(rows);
  }, 120_000);

  it('when referrers pass the cap a few at a time, then the sets keep 100 and the rest as "(other)", as the rows do', async () => {
    const { sets, rows } = await onBothWriters(async (la, writers) => {
      for (let i = 0; i < 130; i += 1) {
        const events: ClickEvent[] = [i, ...(i % 10 === 9 ? [i + 1000, i + 2000] : [])].map((n) => ({
          linkId: la[n % 2]!.id,
          shortCode: la[n % 2]!.short_code,
          clickedAt: T0 + i * 1000,
          ip: `10.1.0.${i % 200}`,
          userAgent: BROWSERS[0]!.replace('{v}', '120'),
          referrer: `https://site${n}.example/`,
        }));
        await bothWrite(writers, events);
      }
    });
    const userReferrers = (sets.userDaily as Array<{ kind: string; value: string }>).filter(
      (r) => r.kind === 'referrer',
    );
    expect(userReferrers.filter((r) => r.value !== '(other)')).toHaveLength(100);
    expect(sets).toEqual(rows);
  }, 120_000);

  it('when a link crosses the cap in batches of new referrers, then the sets skip the cap below it and keep it past it', async () => {
    // Batches of seven clicks, each with a referrer of its own, on one link: while the link has at most 100 clicks
    // its groups cannot reach the cap (no count, no probes); the batch that takes it to 105 must cap again.
    const { sets, rows } = await onBothWriters(async (la, writers) => {
      for (let b = 0; b < 20; b += 1) {
        const events: ClickEvent[] = Array.from({ length: 7 }, (_, k) => ({
          linkId: la[0]!.id,
          shortCode: la[0]!.short_code,
          clickedAt: T0 + (b * 7 + k) * 1000,
          ip: `10.3.0.${k}`,
          userAgent: BROWSERS[2]!.replace('{v}', '128'),
          referrer: `https://r${b * 7 + k}.example/`,
        }));
        await bothWrite(writers, events);
      }
    });
    const referrers = (sets.daily as Array<{ kind: string; value: string; clicks: string }>).filter(
      (r) => r.kind === 'referrer',
    );
    expect(referrers.filter((r) => r.value !== '(other)')).toHaveLength(100);
    expect(Number(referrers.find((r) => r.value === '(other)')?.clicks)).toBe(40);
    expect(sets).toEqual(rows);
  }, 120_000);

  it('when a batch is redelivered with new clicks among its own, then each click is recorded and counted once', async () => {
    const t = await createTestApp('postgres');
    try {
      const [link] = await links(t);
      const writer = createReplaySafeClickWriter({
        db: t.storage.db,
        dialect: t.storage.dialect,
        writer: createPgClickWriter(t.storage),
      });
      const click = (i: number) => keyedClick(link!, i, BROWSERS[1]!.replace('{v}', '17'));
      const first = Array.from({ length: 50 }, (_, i) => click(i));
      await writer.write(first);
      const again = [
        ...first.slice(10),
        ...first.slice(20, 30),
        ...Array.from({ length: 25 }, (_, i) => click(100 + i)),
      ];
      await writer.write(again);
      const s = await snapshot(t);
      expect(s.clicks).toHaveLength(75);
      expect(Number((s.links as Array<{ click_count: string }>)[0]!.click_count)).toBe(75);
      expect(Number((s.links as Array<{ unique_visitors: string }>)[0]!.unique_visitors)).toBe(75);
    } finally {
      await t.close();
    }
  }, 60_000);

  it('when another worker is writing some of its clicks, then it waits, skips what was committed, writes what was not', async () => {
    const t = await createTestApp('postgres');
    const others = [new pg.Client(t.config.databaseUrl!), new pg.Client(t.config.databaseUrl!)];
    try {
      const [link] = await links(t);
      const batch = Array.from({ length: 3 }, (_, i) => keyedClick(link!, i, BROWSERS[0]!.replace('{v}', '130')));
      // Two copies of the batch's first two clicks, each in a transaction of its own that stays open.
      for (const [i, other] of others.entries()) {
        await other.connect();
        await other.query('begin');
        await other.query('insert into clicks (link_id, short_code, clicked_at, click_key) values ($1, $2, $3, $4)', [
          link!.id,
          link!.short_code,
          batch[i]!.clickedAt,
          batch[i]!.key,
        ]);
      }
      const pids = await Promise.all(
        others.map(async (o) => (await o.query('select pg_backend_pid() as pid')).rows[0].pid),
      );
      /** Whether a session of this database waits for a lock the copy's transaction holds. */
      const blockedBy = (copy: number) => async () => {
        const { rows } = await sql<{ n: string }>`select count(*) as n from pg_stat_activity
          where datname = current_database() and ${pids[copy]}::int = any(pg_blocking_pids(pid))`.execute(t.storage.db);
        return Number(rows[0]!.n) === 1;
      };
      const written = createPgClickWriter(t.storage).write(batch);
      await waitFor('the writer to wait for the first copy', blockedBy(0));
      await others[0]!.query('commit');
      await waitFor('the writer to wait for the second copy', blockedBy(1));
      await others[1]!.query('rollback');
      await written;

      const { rows } = await sql<{ click_key: string; n: string }>`select click_key, count(*) as n from clicks
        group by click_key order by click_key`.execute(t.storage.db);
      expect(rows.map((r) => [r.click_key, Number(r.n)])).toEqual(batch.map((e) => [e.key, 1]).sort());
      // The writer counted the two it recorded, and wrote an event for each of them alone.
      const s = await snapshot(t);
      expect(Number((s.links as Array<{ click_count: string }>)[0]!.click_count)).toBe(2);
      const events = await sql<{ n: string }>`select count(*) as n from events where type = 'link.clicked'`.execute(
        t.storage.db,
      );
      expect(Number(events.rows[0]!.n)).toBe(2);
    } finally {
      for (const other of others) await other.end().catch(() => undefined);
      await t.close();
    }
  }, 60_000);
});
