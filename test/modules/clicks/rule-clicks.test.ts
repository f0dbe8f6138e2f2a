import { describe, expect, it } from 'vitest';
import { buildClickEvent, type ClickEvent, type VisitorFacts } from '../../../src/modules/clicks/event/click-event.js';
import { ClickBatch, eventsOfMessage } from '../../../src/modules/clicks/rollups/click-batch.js';
import {
  clickOfFields,
  decodeClickJson,
  encodeClick,
  encodeClickAs,
} from '../../../src/modules/clicks/transport/click-stream.js';
import { createTestApp, engines, TestClock, type TestApp } from '../../helpers/app.js';
import { journalDir, journalLine, writeJournalSegment } from '../../helpers/click-journal.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createLink } from '../../helpers/factories.js';
import { UA } from './user-agents.js';

/**
 * What routed a visit is recorded (SPEC §21): the click carries the rule and the variant the visit policy chose
 * to every writer, and the statistics, the records and the CSV show them. The rules engine sets them on the
 * policy's decision; these tests hand the pipeline clicks that carry them, as the redirect builds them.
 */
const T0 = Date.parse('2026-06-10T09:00:00.000Z');
const DAY = 86_400_000;

const base: ClickEvent = {
  linkId: 7,
  shortCode: 'abc',
  clickedAt: T0,
  ip: '192.0.2.1',
  userAgent: 'UA/1',
  referrer: null,
  country: null,
  visitor: null,
};

describe('the rule and the variant on their way to the writer', () => {
  const visitor: VisitorFacts = {
    ip: '192.0.2.1',
    userAgent: 'UA/1',
    referrer: undefined,
    agentIfDescribed: null,
    country: null,
    botSignal: false,
    countOnly: false,
    isBot: false,
  };
  const facts = { linkId: 7, shortCode: 'abc', alias: null, clickedAt: T0, visitor };

  it("when the policy's decision names a rule and a variant, then the click event carries both; none, then neither", () => {
    const routed = buildClickEvent({ ...facts, rule: 'r1', variant: 'v2' }, null);
    expect(routed).toMatchObject({ ruleId: 'r1', variantId: 'v2' });
    const plain = buildClickEvent({ ...facts, rule: null, variant: null }, null);
    expect(plain).not.toHaveProperty('ruleId');
    expect(plain).not.toHaveProperty('variantId');
  });

  it('when a routed click goes through the Redis stream or the journal, then it comes back with both; entries of the earlier formats read as routed by none', () => {
    for (const click of [
      { ...base, key: 'k1', ruleId: 'r1', variantId: 'v2' },
      { ...base, key: 'k2', ruleId: 'r1' },
      { ...base, key: 'k3', variantId: 'v2', alias: 'sale', domain: 'go.example.test' },
    ]) {
      expect(JSON.parse(encodeClick(click))).toHaveLength(13);
      expect(decodeClickJson(encodeClick(click))).toEqual(click);
      expect(clickOfFields(JSON.parse(encodeClickAs('12', click)))).toEqual({ ...click, key: '12' });
    }
    // Written before the rules: 9 and 11 items, and the journal's earliest line.
    expect(JSON.parse(encodeClick({ ...base, key: 'k4' }))).toHaveLength(9);
    for (const old of [
      JSON.stringify(['k5', 7, 'abc', T0, '192.0.2.1', 'UA/1', null, null, null]),
      JSON.stringify(['k6', 7, 'abc', T0, '192.0.2.1', 'UA/1', null, null, null, null, 'go.example.test']),
    ]) {
      const click = decodeClickJson(old);
      expect(click).not.toBeNull();
      expect(click).not.toHaveProperty('ruleId');
      expect(click).not.toHaveProperty('variantId');
    }
    // Not a click: an id that is not text, or a length no format had.
    expect(decodeClickJson(JSON.stringify([...JSON.parse(encodeClick({ ...base, key: 'k7', ruleId: 'r' })), 1]))).toBe(
      null,
    );
    const wrong = JSON.parse(encodeClick({ ...base, key: 'k8', ruleId: 'r' })) as unknown[];
    wrong[11] = 5;
    expect(decodeClickJson(JSON.stringify(wrong))).toBeNull();
  });

  it('when clicks cross to the writer thread in a batch, then each keeps its rule and variant or none', () => {
    const clicks: ClickEvent[] = [
      { ...base, ruleId: 'r1', variantId: 'v1' },
      { ...base, clickedAt: T0 + 1 },
      { ...base, clickedAt: T0 + 2, ruleId: 'r1' },
    ];
    const crossed = eventsOfMessage(ClickBatch.of(clicks).toMessage(), [0, 1, 2]);
    expect(crossed.map((c) => [c.clickedAt, c.ruleId, c.variantId])).toEqual([
      [T0, 'r1', 'v1'],
      [T0 + 1, undefined, undefined],
      [T0 + 2, 'r1', undefined],
    ]);
  });
});

type Choice = { human_clicks: number; unique_visitors: number };

/** Routed clicks of one link as the redirect enqueues them: three humans and a bot on day one, one more on day two. */
function routedClicks(link: { id: number; short_code: string }): ClickEvent[] {
  const click = (at: number, ip: string, userAgent: string, rule?: string, variant?: string): ClickEvent => ({
    linkId: link.id,
    shortCode: link.short_code,
    clickedAt: at,
    ip,
    userAgent,
    referrer: null,
    country: null,
    ...(rule ? { ruleId: rule } : {}),
    ...(variant ? { variantId: variant } : {}),
  });
  return [
    click(T0, '198.51.100.1', UA.chromeWindows, 'ios', 'a'),
    click(T0 + 60_000, '198.51.100.1', UA.chromeWindows, 'ios', 'a'),
    click(T0 + 120_000, '198.51.100.2', UA.safariIphone, 'ios', 'b'),
    click(T0 + 180_000, '198.51.100.3', UA.safariIphone, 'de'),
    click(T0 + 240_000, '198.51.100.4', UA.safariIphone),
    // A bot a rule routed: in the records, never in by_rule or by_variant.
    click(T0 + 300_000, '66.249.66.1', UA.googlebot, 'ios', 'a'),
    // The next day: visitor 1 again, and a new one.
    click(T0 + DAY, '198.51.100.1', UA.chromeWindows, 'ios', 'b'),
    click(T0 + DAY + 60_000, '198.51.100.5', UA.chromeWindows, 'ios', 'b'),
  ];
}

describe.each(engines)('clicks a rule or a split routed on %s', (engine) => {
  const t = useTestApp(engine, { clock: new TestClock(T0), env: { TOKEN_TTL_SECONDS: '2592000' } });
  const owner = useUser(t);

  const stats = async (code: string, query = '', version = 1) => {
    const res = await t.request({ url: `/api/v${version}/links/${code}/stats${query}`, token: owner.token });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  it('when routed clicks are written, then by_rule and by_variant count human clicks and unique visitors per window, and the records and the CSV name the rule and the variant', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/routed' }, owner.token);
    for (const c of routedClicks(link)) expect(t.app.clickQueue.enqueue(c)).toBe(true);
    await t.app.clickQueue.flush();
    t.clock.ms = T0 + 2 * DAY;

    const all = await stats(link.short_code, '?from=2026-06-10T00:00:00Z&to=2026-06-12T00:00:00Z');
    expect(all).toMatchObject({ total_clicks: 8, human_clicks: 7, bot_clicks: 1 });
    expect(all.by_rule).toEqual([
      { rule_id: 'ios', human_clicks: 5, unique_visitors: 3 },
      { rule_id: 'de', human_clicks: 1, unique_visitors: 1 },
    ]);
    expect(all.by_variant).toEqual([
      { variant_id: 'b', human_clicks: 3, unique_visitors: 3 },
      { variant_id: 'a', human_clicks: 2, unique_visitors: 1 },
    ]);
    const dayOne = await stats(link.short_code, '?from=2026-06-10T00:00:00Z&to=2026-06-11T00:00:00Z');
    expect(dayOne.by_rule).toEqual([
      { rule_id: 'ios', human_clicks: 3, unique_visitors: 2 },
      { rule_id: 'de', human_clicks: 1, unique_visitors: 1 },
    ]);
    expect(dayOne.by_variant).toEqual([
      { variant_id: 'a', human_clicks: 2, unique_visitors: 1 },
      { variant_id: 'b', human_clicks: 1, unique_visitors: 1 },
    ]);
    const dayTwo = await stats(link.short_code, '?from=2026-06-11T00:00:00Z&to=2026-06-12T00:00:00Z', 2);
    expect(dayTwo.byRule).toEqual([{ ruleId: 'ios', humanClicks: 2, uniqueVisitors: 2 }]);
    expect(dayTwo.byVariant).toEqual([{ variantId: 'b', humanClicks: 2, uniqueVisitors: 2 }]);
    const before = await stats(link.short_code, '?from=2026-06-01T00:00:00Z&to=2026-06-09T00:00:00Z');
    expect(before).toMatchObject({ by_rule: [], by_variant: [] });

    const records = await t.request({ url: `/api/v1/links/${link.short_code}/clicks`, token: owner.token });
    expect(records.status, records.text).toBe(200);
    const seen = (records.body.data as Array<{ ip: string; rule_id: string | null; variant_id: string | null }>)
      .map((r) => [r.ip, r.rule_id, r.variant_id])
      .reverse();
    expect(seen).toEqual([
      ['198.51.100.1', 'ios', 'a'],
      ['198.51.100.1', 'ios', 'a'],
      ['198.51.100.2', 'ios', 'b'],
      ['198.51.100.3', 'de', null],
      ['198.51.100.4', null, null],
      ['66.249.66.1', 'ios', 'a'],
      ['198.51.100.1', 'ios', 'b'],
      ['198.51.100.5', 'ios', 'b'],
    ]);
    const v2 = await t.request({ url: `/api/v2/links/${link.short_code}/clicks?limit=1`, token: owner.token });
    expect(v2.body.data[0]).toMatchObject({ ruleId: 'ios', variantId: 'b' });

    const csv = await t.request({
      url: `/api/v1/links/${link.short_code}/clicks`,
      token: owner.token,
      headers: { accept: 'text/csv' },
    });
    expect(csv.status).toBe(200);
    const [header, ...lines] = csv.text.split('\r\n').filter((l) => l !== '');
    const columns = header!.split(',');
    expect(columns.slice(-3)).toEqual(['rule_id', 'variant_id', 'domain']);
    // The user agents hold quoted commas: the ip is the third cell, the rule and the variant the third and second last.
    const cells = lines.map((l) => l.split(','));
    expect(columns[2]).toBe('ip');
    expect(cells.map((c) => [c[2], c.at(-3), c.at(-2)]).reverse()).toEqual(
      seen.map(([ip, rule, variant]) => [ip, rule ?? '', variant ?? '']),
    );
  });

  it('when a link has no routed clicks, then by_rule and by_variant are empty lists and its records say null', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/plain' }, owner.token);
    t.clock.ms = T0;
    expect((await t.request({ url: `/${link.short_code}`, headers: { 'user-agent': UA.chromeWindows } })).status).toBe(
      302,
    );
    await t.app.clickQueue.flush();
    const body = await stats(link.short_code);
    expect(body).toMatchObject({ human_clicks: 1, by_rule: [], by_variant: [] });
    const records = await t.request({ url: `/api/v1/links/${link.short_code}/clicks`, token: owner.token });
    expect(records.body.data).toEqual([expect.objectContaining({ rule_id: null, variant_id: null })]);
  });
});

describe('the click journal keeps what routed a click', () => {
  it('when a process left journal segments behind with routed clicks and lines of the earlier format, then the restart writes each with its rule and variant, or none', async () => {
    const t = await createTestApp('sqlite', { clock: new TestClock(T0) });
    let again: TestApp | null = null;
    try {
      const owner = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        payload: { original_url: 'https://example.com/journal' },
      });
      const link = owner.body as { id: number; short_code: string };
      await t.app.close();
      const clicks = routedClicks(link);
      const lines = [
        ...clicks.map((c, i) => encodeClickAs(i, c)),
        // A line of the earlier format (9 items): no rule, no variant.
        journalLine(clicks.length, {
          linkId: link.id,
          shortCode: link.short_code,
          clickedAt: T0 + DAY + 120_000,
          ip: '198.51.100.9',
          userAgent: UA.chromeWindows,
        }),
      ];
      writeJournalSegment(journalDir(t), 1, { journal: 'p1', first: 0 }, lines);

      again = await createTestApp('sqlite', { dataDir: t.config.dataDir, clock: new TestClock(T0 + 2 * DAY) });
      await again.app.clickQueue.flush();
      const rows = await again.storage.db
        .selectFrom('clicks')
        .select(['ip', 'rule_id', 'variant_id'])
        .where('link_id', '=', link.id)
        .orderBy('clicked_at')
        .execute();
      expect(rows.map((r) => [r.ip, r.rule_id, r.variant_id])).toEqual([
        ...clicks.map((c) => [c.ip, c.ruleId ?? null, c.variantId ?? null]),
        ['198.51.100.9', null, null],
      ]);
      const res = await again.request({
        url: `/api/v1/links/${link.short_code}/stats?from=2026-06-10T00:00:00Z&to=2026-06-12T00:00:00Z`,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.by_rule).toEqual([
        { rule_id: 'ios', human_clicks: 5, unique_visitors: 3 },
        { rule_id: 'de', human_clicks: 1, unique_visitors: 1 },
      ]);
      expect(res.body.by_variant.map((v: Choice & { variant_id: string }) => v.variant_id)).toEqual(['b', 'a']);
    } finally {
      await again?.close();
      await t.close();
    }
  });
});
