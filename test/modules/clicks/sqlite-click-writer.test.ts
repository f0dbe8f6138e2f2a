import { describe, expect, it } from 'vitest';
import { ClickBatch, eventsOfMessage } from '../../../src/modules/clicks/rollups/click-batch.js';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { createPgClickWriter } from '../../../src/modules/clicks/rollups/pg-click-writer.js';
import { createSqliteClickWriter } from '../../../src/modules/clicks/rollups/sqlite-click-writer.js';
import type { ClickWriter } from '../../../src/modules/clicks/rollups/click-writer.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createUser } from '../../helpers/factories.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const BROWSERS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v}.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{v}.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (X11; Linux x86_64; rv:{v}.0) Gecko/20100101 Firefox/{v}.0',
];

async function twoLinksAndADeletedOne(t: TestApp): Promise<Array<{ id: number; short_code: string }>> {
  // Two links of a user (the per-user rollups) and an anonymous one.
  const owner = await createUser(t);
  const create = async (n: number) => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      payload: { original_url: `https://example.com/${n}` },
      ...(n < 3 ? { token: owner.token } : {}),
    });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const links = [await create(1), await create(2), await create(3)];
  // A link deleted while its clicks waited: its clicks are dropped by both writers.
  t.storage.sqlite!.prepare('delete from links where id = ?').run(links[2].id);
  return links;
}

/** Every row the rollups and records hold, without generated ids, in a stable order. */
function snapshot(
  t: TestApp,
): Record<'clicks' | 'links' | 'hourly' | 'visitors' | 'daily' | 'userHourly' | 'userDaily' | 'choices', unknown[]> {
  const q = (sql: string) => t.storage.sqlite!.prepare(sql).all();
  return {
    clicks: q(
      'select link_id, short_code, clicked_at, ip, user_agent, referrer, is_bot, browser, os, device, country, rule_id, variant_id from clicks order by link_id, clicked_at, ip, user_agent, referrer',
    ),
    links: q(
      'select id, click_count, bot_clicks, unique_visitors, first_click_at, last_click_at from links order by id',
    ),
    hourly: q('select * from link_click_hourly order by link_id, hour_start'),
    visitors: q('select * from link_visitors order by link_id, ip'),
    daily: q('select * from link_click_daily_values order by link_id, kind, day_start, value'),
    userHourly: q('select * from user_click_hourly order by user_id, hour_start'),
    userDaily: q('select * from user_click_daily_values order by user_id, kind, day_start, value'),
    choices: q('select * from link_click_daily_choices order by link_id, day_start, kind, value, visitor'),
  };
}

type Writer = ClickWriter;

/**
 * Two SQLite apps with the same links (twoLinksAndADeletedOne): `write` sends the same clicks through the
 * writer thread (SQLite's default) on the first and the Kysely writer of the PostgreSQL engine on the second;
 * returns both apps' rows after the thread closed.
 */
async function onBothWriters(
  write: (links: Array<{ id: number; short_code: string }>, writers: Writer[]) => Promise<void>,
) {
  // Two apps in one process: building the second blocks the first's event loop, which its overload guard
  // would take for overload. Not what these tests are about.
  const env = { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' };
  const a = await createTestApp('sqlite', { env });
  const b = await createTestApp('sqlite', { env });
  try {
    const [la, lb] = [await twoLinksAndADeletedOne(a), await twoLinksAndADeletedOne(b)];
    expect(la.map((l) => l.id)).toEqual(lb.map((l) => l.id));
    const threaded = createSqliteClickWriter(a.storage.sqlite!.name);
    const portable = createPgClickWriter(b.storage);
    await write(la, [threaded, portable]);
    await threaded.close();
    return { threaded: snapshot(a), portable: snapshot(b) };
  } finally {
    await a.close();
    await b.close();
  }
}

const bothWrite = async (writers: Writer[], events: ClickEvent[]) => {
  for (const w of writers) await w.write(events);
};

describe('the embedded engine click writer (writer thread)', () => {
  it('when a batch has many links, hours, addresses, referrers and agents, then it leaves exactly the rows of the portable writer', async () => {
    const { threaded: sa, portable: sb } = await onBothWriters(async (la, writers) => {
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
      for (let i = 0; i < 1500; i += 1) {
        const link = la[i % 3]!;
        events.push({
          linkId: link.id,
          shortCode: link.short_code,
          clickedAt: T0 + i * 97_000,
          ip: i % 5 === 0 ? null : `10.0.${i % 7}.${i % 11}`,
          // 130 distinct agents a day on the first link: past the cap of 100, the rest is "(other)".
          // Bots (Agent/…, none) and browsers of three platforms in ten versions.
          userAgent:
            i % 9 === 0
              ? null
              : i % 4 === 0
                ? `Agent/${i % 130}${'x'.repeat(i % 2 ? 300 : 0)}`
                : BROWSERS[i % 3]!.replace('{v}', String(100 + (i % 10))),
          country: ['DE', null, 'FR', 'JP'][i % 4]!,
          ...(i % 6 === 0 ? { visitor: `h:${i % 13}` } : {}),
          // What routed the visit (SPEC §21): a rule, a rule and its split's variant, or nothing.
          ...(i % 4 !== 3 ? { ruleId: `r${i % 2}` } : {}),
          ...(i % 4 === 1 ? { variantId: `v${i % 3}` } : {}),
          referrer: i % 3 === 1 ? `https://site${i % 120}.example/path` : referrers[i % referrers.length]!,
        });
      }
      for (let i = 0; i < events.length; i += 400) await bothWrite(writers, events.slice(i, i + 400));
    });
    expect(sa.clicks.length).toBe(1000); // the deleted link's 500 clicks are dropped
    const choices = sa.choices as Array<{ kind: string; visitor: string }>;
    expect(new Set(choices.map((r) => r.kind))).toEqual(new Set(['rule', 'variant']));
    expect(choices.some((r) => r.visitor === '')).toBe(true); // humans without an address
    expect(sa.userDaily.length).toBeGreaterThan(0);
    expect(new Set((sa.userDaily as Array<{ kind: string }>).map((r) => r.kind))).toEqual(
      new Set(['referrer', 'user_agent', 'browser', 'os', 'device', 'country', 'link']),
    );
    expect(sa).toEqual(sb);
  }, 120_000);

  it('when a window fails part way, then the journal mark says how far it got, the batch drops that part, and writing the rest counts every click once', async () => {
    const t = await createTestApp('sqlite', { env: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' } });
    // Transactions of 50 clicks: a window of 300 takes six.
    const writer = createSqliteClickWriter(t.storage.sqlite!.name, { budgetMs: 0.001 });
    try {
      const links: Array<{ id: number; short_code: string }> = [];
      for (let n = 0; n < 3; n += 1) {
        const res = await t.request({
          method: 'POST',
          url: '/api/v1/links',
          payload: { original_url: `https://example.com/w${n}` },
        });
        expect(res.status).toBe(201);
        links.push(res.body);
      }
      const [a, b, c] = links as [
        { id: number; short_code: string },
        { id: number; short_code: string },
        { id: number; short_code: string },
      ];
      expect(a.id < b.id && b.id < c.id).toBe(true);
      const events: ClickEvent[] = Array.from({ length: 300 }, (_, i) => {
        const l = [c, a, b][i % 3]!;
        return {
          linkId: l.id,
          shortCode: l.short_code,
          clickedAt: T0 + i,
          ip: `10.2.0.${i % 50}`,
          userAgent: BROWSERS[0]!.replace('{v}', '120'),
          referrer: null,
        };
      });
      const sqlite = t.storage.sqlite!;
      // By link: a's and b's transactions commit, then c's first 50 clicks, and its 51st record fails.
      sqlite.exec(
        `create trigger fail_c before insert on clicks when new.link_id = ${c.id} and (select count(*) from clicks where link_id = ${c.id}) >= 50 begin select raise(abort, 'disk on fire'); end`,
      );
      const batch = ClickBatch.of(events);
      await expect(writer.writeBatch!(batch, { journal: 'w1', first: 0, end: 300 })).rejects.toThrow(/disk on fire/);
      expect(batch.written).toEqual({ span: 300, link: c.id, count: 50 });
      expect(batch.toEvents().map((e) => e.clickedAt)).toEqual(
        events
          .filter((e) => e.linkId === c.id)
          .slice(50)
          .map((e) => e.clickedAt),
      );
      const mark = () =>
        sqlite
          .prepare('select journal, committed, window_end, window_link, window_count from click_journal_marks')
          .all();
      expect(mark()).toEqual([{ journal: 'w1', committed: 0, window_end: 300, window_link: c.id, window_count: 50 }]);
      const counted = () =>
        sqlite
          .prepare(
            'select l.id, l.click_count, (select count(*) from clicks k where k.link_id = l.id) as records, (select count(distinct clicked_at) from clicks k where k.link_id = l.id) as times from links l order by l.id',
          )
          .all();
      expect(counted()).toEqual([
        { id: a.id, click_count: 100, records: 100, times: 100 },
        { id: b.id, click_count: 100, records: 100, times: 100 },
        { id: c.id, click_count: 50, records: 50, times: 50 },
      ]);

      sqlite.exec('drop trigger fail_c');
      await writer.writeBatch!(batch, { journal: 'w1', first: 0, end: 300, after: { link: c.id, count: 50 } });
      expect(mark()).toEqual([
        { journal: 'w1', committed: 300, window_end: null, window_link: null, window_count: null },
      ]);
      expect(counted()).toEqual([a, b, c].map((l) => ({ id: l.id, click_count: 100, records: 100, times: 100 })));
    } finally {
      await writer.close();
      await t.close();
    }
  }, 60_000);

  it('when a journaled window holds data_fresh_as_of (a replay of older clicks is running), then it commits its clicks and leaves the time; the next window moves it', async () => {
    const t = await createTestApp('sqlite');
    const writer = createSqliteClickWriter(t.storage.sqlite!.name);
    try {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        payload: { original_url: 'https://example.com/fresh' },
      });
      expect(res.status).toBe(201);
      const click = (at: number): ClickEvent => ({
        linkId: res.body.id,
        shortCode: res.body.short_code,
        clickedAt: at,
        ip: '10.3.0.1',
        userAgent: null,
        referrer: null,
      });
      const fresh = () =>
        t.storage.sqlite!.prepare('select max(fresh_as_of) as at from click_ingest').get() as { at: number | null };
      await writer.writeBatch!(ClickBatch.of([click(T0)]), { journal: 'old', first: 0, end: 1 });
      expect(fresh()).toEqual({ at: T0 });
      await writer.writeBatch!(ClickBatch.of([click(T0 + 5_000), click(T0 + 6_000)]), {
        journal: 'live',
        first: 0,
        end: 2,
        holdFresh: true,
      });
      expect(fresh()).toEqual({ at: T0 });
      const records = t.storage
        .sqlite!.prepare('select count(*) as n from clicks where link_id = ?')
        .get(res.body.id) as { n: number };
      expect(records.n).toBe(3);
      await writer.writeBatch!(ClickBatch.of([click(T0 + 7_000)]), { journal: 'live', first: 2, end: 3 });
      expect(fresh()).toEqual({ at: T0 + 7_000 });
    } finally {
      await writer.close();
      await t.close();
    }
  });

  it('when a link gets a new referrer per transaction past the cap, then it keeps 100 and counts the rest as "(other)", as the portable writer does', async () => {
    // A link's first clicks skip the cap's count (it cannot be reached yet: sqlite-click-thread.ts), and so do
    // its owner's (the user's clicks that day bound theirs); the 100th distinct value and later ones must find
    // the cap all the same, in the link's top list and in the user's.
    const { threaded: sa, portable: sb } = await onBothWriters(async (la, writers) => {
      for (let i = 0; i < 130; i += 1) {
        // One click per transaction, two at once now and then (a group of two new values near the cap).
        const events: ClickEvent[] = [i, ...(i % 10 === 9 ? [i + 1000] : [])].map((n) => ({
          linkId: la[0]!.id,
          shortCode: la[0]!.short_code,
          clickedAt: T0 + i * 1000,
          ip: `10.1.0.${i % 200}`,
          userAgent: BROWSERS[0]!.replace('{v}', '120'),
          referrer: `https://site${n}.example/`,
        }));
        await bothWrite(writers, events);
      }
    });
    const referrers = (sa.daily as Array<{ kind: string; value: string; clicks: number }>).filter(
      (r) => r.kind === 'referrer',
    );
    expect(referrers.filter((r) => r.value !== '(other)')).toHaveLength(100);
    expect(referrers.find((r) => r.value === '(other)')!.clicks).toBe(143 - 100);
    expect(sa).toEqual(sb);
  }, 120_000);
});

describe('click batches', () => {
  const event = (i: number): ClickEvent => ({
    linkId: i,
    shortCode: `c${i}`,
    clickedAt: 1000 + i,
    ip: i % 2 ? null : `10.0.0.${i}`,
    userAgent: i % 3 ? 'UA' : null,
    referrer: `https://r${i % 2}.example/`,
  });

  it('when clicks are pushed, then they read back as sent, each distinct agent and referrer stored once', () => {
    const batch = new ClickBatch(10);
    const sent = Array.from({ length: 6 }, (_, i) => event(i));
    for (const e of sent) batch.push(e);
    expect(batch.toEvents()).toEqual(sent);
    // every distinct text once: 6 codes, 3 addresses, one agent, two referrers
    const values = batch.toMessage().values;
    expect(values.length).toBe(new Set(values).size);
    expect(values.filter((v) => v === 'UA' || v.startsWith('https://r')).sort()).toEqual([
      'UA',
      'https://r0.example/',
      'https://r1.example/',
    ]);
    expect(values.length).toBe(6 + 3 + 1 + 2);
  });

  it('when a batch is filled (its text index let go), reset and filled again, then each filling reads back as sent with each text once', () => {
    const batch = new ClickBatch(4);
    for (const round of [0, 1]) {
      const sent = [0, 1, 2, 3].map((i) => event(round * 4 + i));
      for (const e of sent) batch.push(e);
      expect(batch.full).toBe(true);
      expect(batch.toEvents()).toEqual(sent);
      expect(batch.values.length).toBe(new Set(batch.values).size);
      // what the writer thread is sent reads back as the same clicks
      const message = batch.toMessage();
      expect(eventsOfMessage(message, [3, 0])).toEqual([sent[3], sent[0]]);
      batch.reset();
    }
  });

  it('when a window writer committed part of a batch, then dropping it keeps the rest in order and remembers where the window got to; reset forgets it', () => {
    // links 3, 1, 2, 1, 3, 1, 2: committed are link 1 and the first click of link 2
    const batch = ClickBatch.of([3, 1, 2, 1, 3, 1, 2].map((link, i) => ({ ...event(i), linkId: link })));
    batch.dropWritten(2, 1);
    expect(batch.toEvents().map((e) => [e.linkId, e.clickedAt])).toEqual([
      [3, 1000],
      [3, 1004],
      [2, 1006],
    ]);
    expect(batch.written).toEqual({ span: 7, link: 2, count: 1 });
    // a second failure further on, in the same link: counts add up; the span stays the window's
    batch.dropWritten(2, 1);
    expect(batch.toEvents().map((e) => e.linkId)).toEqual([3, 3]);
    expect(batch.written).toEqual({ span: 7, link: 2, count: 2 });
    batch.dropWritten(3, 1);
    expect(batch.written).toEqual({ span: 7, link: 3, count: 1 });
    batch.reset();
    expect({ length: batch.length, written: batch.written }).toEqual({ length: 0, written: null });
  });
});
