/**
 * Fast seeding for the benchmarks: the schema comes from Ferry's own migrations, the rows are written with
 * better-sqlite3 prepared statements in large transactions (a million links in a few seconds), bypassing
 * the service layer on purpose: the benchmarks measure serving, not seeding.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { createStorage, type Storage } from '../../src/db/database.js';
import type { Database } from '../../src/db/types.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { DAY_MS, HOUR_MS, floorTo } from '../../src/modules/clicks/rollups/rollup-plan.js';
import { generateCode } from '../../src/modules/links/short-code.js';
import type { ClickEvent } from '../../src/modules/clicks/event/click-event.js';
import { encodeClickAs } from '../../src/modules/clicks/transport/click-stream.js';

export async function openMigrated(dataDir: string): Promise<Storage & { sqlite: NonNullable<Storage['sqlite']> }> {
  const storage = createStorage({ databaseUrl: null, dataDir, dbPoolMax: 1 });
  await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  return storage as Storage & { sqlite: NonNullable<Storage['sqlite']> };
}

/**
 * `count` anonymous links with random 8-character codes (Ferry's generator); returns [code, url] pairs.
 * Inserted in code order, so that the unique index on the code is appended to rather than split at random.
 * `aliasOf`: one alias per link (SPEC §20), claimed in link_codes beside its code as the API does.
 */
export function seedLinks(
  storage: Awaited<ReturnType<typeof openMigrated>>,
  count: number,
  now: number,
  domainOf?: (i: number) => number,
  aliasOf?: (i: number) => string,
): Array<[string, string]> {
  const codes = new Set<string>();
  while (codes.size < count) codes.add(generateCode());
  const links = [...codes]
    .sort()
    .map((code, i): [string, string] => [code, `https://example.com/articles/${i}?utm_source=bench`]);
  const { sqlite } = storage;
  sqlite.pragma('cache_size = -262144');
  const claim = sqlite.prepare(
    'insert into link_codes (domain_id, code, link_id, retired_at, retired_reason) values (?, ?, ?, null, null)',
  );
  const insert = sqlite.prepare(
    'insert into links (domain_id, short_code, original_url, user_id, expires_at, created_at, aliases) values (?, ?, ?, null, null, ?, ?)',
  );
  const all = sqlite.transaction((rows: Array<[string, string]>, from: number) => {
    rows.forEach(([code, url], j) => {
      const i = from + j;
      const domainId = domainOf?.(i) ?? 0;
      const alias = aliasOf?.(i);
      const id = insert.run(domainId, code, url, now, alias ?? '').lastInsertRowid;
      claim.run(domainId, code, id);
      if (alias !== undefined) claim.run(domainId, alias, id);
    });
  });
  for (let i = 0; i < links.length; i += 100_000) all(links.slice(i, i + 100_000), i);
  return links;
}

/**
 * The same links through Kysely, for a PostgreSQL database (bench/ingest.ts with DATABASE_URL,
 * scripts/scaleout/cluster-bench.ts); returns their codes.
 */
export async function seedLinksPortable(db: Kysely<Database>, count: number, now: number): Promise<string[]> {
  const codes = new Set<string>();
  while (codes.size < count) codes.add(generateCode());
  const sorted = [...codes].sort();
  for (let i = 0; i < sorted.length; i += 2_000) {
    const part = sorted.slice(i, i + 2_000);
    await db.transaction().execute(async (tx) => {
      const rows = await tx
        .insertInto('links')
        .values(
          part.map((code, j) => ({
            short_code: code,
            original_url: `https://example.com/articles/${i + j}?utm_source=bench`,
            user_id: null,
            expires_at: null,
            created_at: now,
            updated_at: now,
          })),
        )
        .returning(['id', 'short_code'])
        .execute();
      await tx
        .insertInto('link_codes')
        .values(rows.map((r) => ({ code: r.short_code, link_id: r.id, retired_at: null, retired_reason: null })))
        .execute();
    });
  }
  return sorted;
}

/** `count` verified domains (ids 1..count on a fresh database), d<n>.bench.example; returns their host names in id order. */
export function seedVerifiedDomains(
  storage: Awaited<ReturnType<typeof openMigrated>>,
  count: number,
  now: number,
): string[] {
  const hosts = Array.from({ length: count }, (_, i) => `d${i + 1}.bench.example`);
  const insert = storage.sqlite.prepare(
    'insert into domains (hostname, owner_id, token, verified_at, created_at, updated_at) values (?, null, ?, ?, ?, ?)',
  );
  storage.sqlite.transaction(() => hosts.forEach((host, i) => insert.run(host, `benchtoken${i}`, now, now, now)))();
  return hosts;
}

export interface StatsSeed {
  code: string;
  linkId: number;
  totalClicks: number;
  rawClicks: number;
  hours: number;
}

/**
 * One link with `totalClicks` clicks spread over the last `days` days, as the click writer would have left
 * it: the counters on the link row (a tenth bots), one hourly rollup row per hour, 100 referrer origins, user
 * agents, browsers, OS and countries per day plus "(other)", 4 devices, and `rawClicks` click records (the statistics never read them; docs/performance.md, "Statistics").
 */
export function seedStatsLink(
  storage: Awaited<ReturnType<typeof openMigrated>>,
  opts: { totalClicks: number; rawClicks: number; days: number; now: number },
): StatsSeed {
  const { sqlite } = storage;
  const { totalClicks, rawClicks, days, now } = opts;
  const code = 'stats10m';
  const start = floorTo(now, DAY_MS) - days * DAY_MS;
  const hours = Math.floor((now - start) / HOUR_MS);
  return sqlite.transaction((): StatsSeed => {
    // A tenth of the clicks by bots (SPEC §15).
    const linkId = Number(
      sqlite
        .prepare(
          'insert into links (short_code, original_url, user_id, expires_at, created_at, click_count, bot_clicks, unique_visitors, first_click_at, last_click_at) values (?, ?, null, null, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          code,
          'https://example.com/popular',
          start,
          totalClicks,
          Math.floor(totalClicks / 10),
          Math.min(totalClicks, 2_500_000),
          start,
          now - 1,
        ).lastInsertRowid,
    );
    sqlite
      .prepare('insert into link_codes (code, link_id, retired_at, retired_reason) values (?, ?, null, null)')
      .run(code, linkId);
    const hour = sqlite.prepare(
      'insert into link_click_hourly (link_id, hour_start, clicks, bots) values (?, ?, ?, ?)',
    );
    let left = totalClicks;
    for (let h = 0; h < hours; h += 1) {
      const n = h === hours - 1 ? left : Math.floor(totalClicks / hours);
      hour.run(linkId, start + h * HOUR_MS, n, Math.floor(n / 10));
      left -= n;
    }
    const value = sqlite.prepare(
      'insert into link_click_daily_values (link_id, kind, day_start, value, clicks) values (?, ?, ?, ?, ?)',
    );
    const perDay = Math.floor(totalClicks / days);
    for (let d = 0; d <= days; d += 1) {
      const day = start + d * DAY_MS;
      for (let v = 0; v < 100; v += 1) {
        value.run(linkId, 'referrer', day, `https://site${v}.example`, Math.max(1, Math.floor(perDay / (v + 2))));
        value.run(
          linkId,
          'user_agent',
          day,
          `Mozilla/5.0 (bench; agent ${v})`,
          Math.max(1, Math.floor(perDay / (v + 2))),
        );
        // The analytics' top lists, as full as the cap lets them be: every kind at 100 values a day.
        value.run(linkId, 'browser', day, `Browser ${v}`, Math.max(1, Math.floor(perDay / (v + 2))));
        value.run(linkId, 'os', day, `OS ${v}`, Math.max(1, Math.floor(perDay / (v + 2))));
        value.run(
          linkId,
          'country',
          day,
          `${String.fromCharCode(65 + (v % 26))}${String.fromCharCode(65 + Math.floor(v / 26))}`,
          Math.max(1, Math.floor(perDay / (v + 2))),
        );
      }
      for (const [i, device] of ['desktop', 'mobile', 'tablet', 'other'].entries())
        value.run(linkId, 'device', day, device, Math.floor(perDay / (i + 2)));
      value.run(linkId, 'referrer', day, '(other)', 7);
      value.run(linkId, 'user_agent', day, '(other)', 7);
    }
    const click = sqlite.prepare(
      'insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer) values (?, ?, ?, ?, ?, ?)',
    );
    for (let i = 0; i < rawClicks; i += 1) {
      click.run(
        linkId,
        code,
        start + Math.floor((i / rawClicks) * (now - start)),
        `10.0.${(i >> 8) & 255}.${i & 255}`,
        'Mozilla/5.0 (bench)',
        'https://site1.example/page',
      );
    }
    return { code, linkId, totalClicks, rawClicks, hours };
  })();
}

/**
 * `count` clicks left in DATA_DIR/click-journal as a killed process leaves them: segments of the size the server
 * writes (16 MB), each a header line then one line per click (transport/click-journal.ts), no mark in the
 * database. The next server start on the directory writes them (its replay).
 */
export function writeLeftOverJournal(dataDir: string, count: number, clickAt: (i: number) => ClickEvent): void {
  const dir = path.join(dataDir, 'click-journal');
  mkdirSync(dir);
  let seq = 1;
  let text = '';
  const cut = () => {
    writeFileSync(path.join(dir, `clicks-${String(seq++).padStart(12, '0')}.journal`), text);
    text = '';
  };
  for (let i = 0; i < count; i += 1) {
    if (text === '') text = `${JSON.stringify({ journal: 'killed', first: i })}\n`;
    text += `${encodeClickAs(i, clickAt(i))}\n`;
    if (text.length >= 16 * 1024 * 1024) cut();
  }
  if (text !== '') cut();
}
