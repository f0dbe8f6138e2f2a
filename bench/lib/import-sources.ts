/**
 * Import sources at scale for bench/import.ts: a YOURLS database on the local MariaDB, filled by the server
 * itself from its SEQUENCE engine (seq_0_to_N tables: a million log rows in seconds, nothing sent over the
 * wire), and a generic CSV file written with csv-stringify.
 *
 * Both hold `links` links over `links / 100` days; the YOURLS log holds `visits` visits spread over the links
 * (link k gets about visits/links of them, every link at least one when visits >= links), from 2,000 client
 * addresses, 40 user agents (a tenth bots), 60 referrers (a fifth direct) and 20 countries. A tenth of the
 * keywords are longer than a short code (`spring-sale-<n>`), which an import keeps as aliases.
 */
import { createWriteStream } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { finished } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import mysql from 'mysql2/promise';
import { isReservedCode, RESERVED_CODES } from '../../src/modules/links/index.js';
import { yourlsTables } from '../../test/modules/imports/fixtures/yourls-schema.js';

const DAY_S = 86_400;
/** 2024-01-01T00:00:00Z: the sources' history starts here. */
const EPOCH_S = 1_704_067_200;

/**
 * Link k's code: base 36, like YOURLS's own sequence; a code Ferry reserves (SPEC §6: `api`, `app`, `v1`, `v2`,
 * `v3` fall among the first 100,000) with `-link` after it, which an import keeps as an alias. As they were, the
 * import refused those items (5 CSV rows and 4 YOURLS links in bench/import.ts's runs), as it should.
 */
const reservedSql = [...RESERVED_CODES].map((c) => mysql.escape(c)).join(', ');
const codeSql = (k: string) => {
  const base36 = `lower(conv(${k} + 1000, 10, 36))`;
  return `if(${base36} in (${reservedSql}), concat(${base36}, '-link'), ${base36})`;
};
export const codeOf = (k: number): string => {
  const code = (k + 1000).toString(36);
  return isReservedCode(code) ? `${code}-link` : code;
};

/** Link k's keyword: its code; every tenth a slug that does not fit short_code. */
const keywordSql = (k: string) => `if(${k} % 10 = 9, concat('spring-sale-', ${k}), ${codeSql(k)})`;
export const keywordOf = (k: number): string => (k % 10 === 9 ? `spring-sale-${k}` : codeOf(k));

const agents = [
  ...Array.from(
    { length: 36 },
    (_, i) =>
      `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${100 + i}.0.0.0 Safari/537.36`,
  ),
  'Googlebot/2.1 (+http://www.google.com/bot.html)',
  'curl/8.5.0',
  'python-requests/2.31.0',
  'facebookexternalhit/1.1',
];
const referrers = ['direct', ...Array.from({ length: 59 }, (_, i) => `https://site${i}.example/page/${i % 7}`)];
const countries = [
  'US',
  'DE',
  'FR',
  'GB',
  'JP',
  'BR',
  'IN',
  'CA',
  'ES',
  'IT',
  'NL',
  'SE',
  'PL',
  'AU',
  'MX',
  'KR',
  'CH',
  'AT',
  'BE',
  '',
];
const elt = (index: string, values: readonly string[]) =>
  `elt(1 + ${index}, ${values.map((v) => mysql.escape(v)).join(', ')})`;

export interface YourlsBenchDatabase {
  url: string;
  /** `count` more log rows, after every row there is, spread over the links (their `clicks` follow) */
  addVisits(count: number): Promise<void>;
  drop(): Promise<void>;
}

/** A YOURLS database (YOURLS's own CREATE TABLEs) of `links` links and `visits` log rows. */
export async function createYourlsDatabase(
  serverUrl: string,
  links: number,
  visits: number,
): Promise<YourlsBenchDatabase> {
  const name = `ferry_bench_${randomBytes(4).toString('hex')}`;
  const admin = await mysql.createConnection({ uri: serverUrl });
  await admin.query(`create database \`${name}\` character set utf8mb4`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await mysql.createConnection({ uri: url.toString() });
  try {
    for (const sql of yourlsTables()) await db.query(sql);
    await db.query(
      `insert into yourls_url (keyword, url, title, timestamp, ip, clicks)
       select ${keywordSql('seq')}, concat('https://example.com/articles/', seq, '?utm_source=yourls'),
              if(seq % 3 = 0, null, concat('Article ', seq)), from_unixtime(${EPOCH_S} + seq * ${Math.floor(DAY_S / 100)}), '127.0.0.1', 0
       from seq_0_to_${links - 1}`,
    );
    // Visit v belongs to link v mod links: each link's visits come after its creation.
    await db.query(
      `insert into yourls_log (click_time, shorturl, referrer, user_agent, ip_address, country_code)
       select from_unixtime(${EPOCH_S} + (seq % ${links}) * ${Math.floor(DAY_S / 100)} + 60 + floor(seq / ${links}) * 3607),
              ${keywordSql(`(seq % ${links})`)}, ${elt(`seq % ${referrers.length}`, referrers)}, ${elt(`(seq div 7) % ${agents.length}`, agents)},
              concat('198.51.', (seq div 250) % 8, '.', seq % 250), ${elt(`(seq div 3) % ${countries.length}`, countries)}
       from seq_0_to_${visits - 1}`,
    );
    await db.query(
      `update yourls_url u join (select shorturl, count(*) as n from yourls_log group by shorturl) l on l.shorturl = u.keyword set u.clicks = l.n`,
    );
  } finally {
    await db.end();
  }
  return {
    url: url.toString(),
    addVisits: async (count) => {
      const more = await mysql.createConnection({ uri: url.toString() });
      try {
        await more.query(
          `insert into yourls_log (click_time, shorturl, referrer, user_agent, ip_address, country_code)
           select from_unixtime(${EPOCH_S} + 400 * ${DAY_S} + seq * 61), ${keywordSql(`(seq * 7 % ${links})`)}, 'direct', ${elt(`seq % ${agents.length}`, agents)},
                  concat('203.0.113.', seq % 250), 'NL'
           from seq_0_to_${count - 1}`,
        );
        await more.query(
          `update yourls_url u join (select shorturl, count(*) as n from yourls_log group by shorturl) l on l.shorturl = u.keyword set u.clicks = l.n`,
        );
      } finally {
        await more.end();
      }
    },
    drop: async () => {
      await admin.query(`drop database if exists \`${name}\``);
      await admin.end();
    },
  };
}

/** A generic CSV file (docs/migrating.md) of `links` links with codes, titles, tags and a few aliases. */
export async function writeGenericCsv(file: string, links: number): Promise<void> {
  const out = createWriteStream(file);
  const csv = stringify({
    header: true,
    columns: [
      'url',
      'code',
      'domain',
      'created_at',
      'expires_at',
      'tags',
      'title',
      'max_visits',
      'forward_query',
      'aliases',
    ],
  });
  csv.pipe(out);
  for (let k = 0; k < links; k += 1) {
    const code = codeOf(k);
    const row = [
      `https://example.com/articles/${k}?utm_source=csv`,
      code,
      '',
      new Date((EPOCH_S + k * 864) * 1000).toISOString(),
      '',
      ['news', 'spring', 'tech', 'docs'].slice(0, k % 4).join('|'),
      k % 3 === 0 ? '' : `Article ${k}, "quoted"`,
      '',
      k % 5 === 0 ? 'true' : '',
      k % 10 === 9 ? `spring-sale-${k}` : '',
    ];
    if (!csv.write(row)) await new Promise((resolve) => csv.once('drain', resolve));
  }
  csv.end();
  await finished(out);
}
