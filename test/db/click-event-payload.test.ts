import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { clickValuesOf, compactClickPayload, type ClickEventValues } from '../../src/db/click-event-payload.js';
import { openEventsCursor, recordPublicEvents } from '../../src/db/events.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import { linkClickedInput, linkClickedRows, type ClickedLink } from '../../src/modules/clicks/rollups/click-events.js';
import type { ClickFacts } from '../../src/modules/clicks/rollups/rollup-plan.js';
import { engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';

const HUMAN: [ClickEvent, ClickFacts, ClickedLink] = [
  {
    linkId: 0,
    shortCode: 'ünï-"q"',
    clickedAt: Date.UTC(2026, 11, 5, 10, 11, 12, 345),
    ip: '192.0.2.1',
    userAgent: 'Mozilla/5.0',
    referrer: 'https://User@News.Example.org:8443/a?b#c',
    alias: 'old-slug',
    domain: 'go.example.test',
    ruleId: 'rule_1',
    variantId: 'var_b',
    country: 'DE',
  },
  { isBot: false, browser: 'Firefox', os: 'Linux', device: 'desktop', country: 'DE', countOnly: false },
  { userId: null, domainId: 0, originalUrl: 'https://example.com/a path?q="x"&\u2028é' },
];
const BOT: [ClickEvent, ClickFacts, ClickedLink] = [
  { linkId: 0, shortCode: 'b0t', clickedAt: 1, ip: null, userAgent: null, referrer: null },
  { isBot: true, browser: null, os: null, device: null, country: null, countOnly: false },
  { userId: null, domainId: 0, originalUrl: 'https://example.com/' },
];

/**
 * SPEC §22's `link.clicked` as the embedded click writer stores it (db/click-event-payload.ts): a compact payload
 * that a consumer reads back as the very envelope a whole stored one gives, keys in the same order.
 */
describe.each(engines)('compact link.clicked events on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a click is stored compact and whole, then both read back as the same envelope, byte for byte', async () => {
    const { db, dialect } = t.storage;
    const link = await sql<{ id: number }>`insert into links (domain_id, short_code, original_url, created_at,
      updated_at, tags, aliases) values (0, 'cevt', 'https://example.com/', 1, 1, '', '') returning id`.execute(db);
    const linkId = Number(link.rows[0]!.id);
    for (const [event, facts, clicked] of [HUMAN, BOT]) {
      const e = { ...event, linkId };
      const at = Date.UTC(2026, 11, 5, 10, 11, 13, 0);
      const cursor = await openEventsCursor(db, 'end');
      const [whole] = await recordPublicEvents(db, dialect, [linkClickedInput(42, e, facts, clicked)], { at });
      const [row] = linkClickedRows([{ clickId: 42, event: e, facts, link: clicked }], at);
      expect(String(row![5]).startsWith('['), 'the payload is compact').toBe(true);
      await sql`insert into events (event_id, type, user_id, domain_id, link_id, payload, created_at)
        values (${sql.join(row!.map((v) => sql`${v}`))})`.execute(db);
      const [first, second] = await cursor.read();
      expect(second!.linkId).toBe(linkId);
      // the same envelope but for the event's own id, and the same JSON text (a webhook's signed body)
      const asWhole = { ...second!.event, id: first!.event.id };
      expect(asWhole).toEqual(first!.event);
      expect(JSON.stringify(asWhole)).toBe(JSON.stringify(whole));
      expect(second!.event.id).toBe(row![0]);
    }
  });

  it('when values are written compact, then they read back as they were', () => {
    const values: ClickEventValues = {
      clickId: 7,
      clickedAt: 1_733_390_000_123,
      domain: null,
      shortCode: 'a,b]"\\',
      alias: null,
      country: null,
      device: 'mobile',
      browser: null,
      os: 'iOS',
      referrerHost: 'x.example',
      ruleId: null,
      variantId: 'v',
      bot: true,
      originalUrl: '[not json',
    };
    expect(clickValuesOf(compactClickPayload(values))).toEqual(values);
    expect(clickValuesOf('{"id":"evt_x"}')).toBeNull();
  });

  it('when the database holds a migration this build does not know, then migrating refuses it (058 marks the format)', async () => {
    const { db, dialect } = t.storage;
    await sql`insert into kysely_migration (name, timestamp) values ('999-a-later-build', ${new Date().toISOString()})`.execute(
      db,
    );
    try {
      await expect(migrateToLatest(db as unknown as Kysely<unknown>, dialect)).rejects.toThrow(
        /999-a-later-build is missing/,
      );
    } finally {
      await sql`delete from kysely_migration where name = '999-a-later-build'`.execute(db);
    }
  });
});
