import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { cliEnvFor, runFerry, startFerry } from '../helpers/cli.js';
import { createUser } from '../helpers/factories.js';
import { useTestApp } from '../helpers/fixtures.js';
import { createMysqlDatabase, type TestMysqlDatabase } from '../helpers/mysql.js';
import { missing, unless } from '../helpers/skip.js';
import { finishedJob } from '../modules/imports/imports.helpers.js';
import { yourlsTables } from '../modules/imports/fixtures/yourls-schema.js';

const KEYWORDS = 120;
const VISITS = 36_000;

/** What an import leaves of its links, visits and rollups (not the job's own rows, nor the times it ran at). */
const DUMPS = [
  'select id, short_code, user_id, click_count, bot_clicks, first_click_at, last_click_at, unique_visitors from links',
  'select link_id, short_code, clicked_at, ip, user_agent, referrer, country, imported from clicks',
  'select * from link_click_hourly',
  'select * from user_click_hourly',
  'select * from link_click_daily_values',
  'select * from user_click_daily_values',
  'select * from link_visitors',
  'select source_key, source_domain, source_code, link_id, visits, visits_cursor from import_links',
];

async function dump(t: TestApp): Promise<Record<string, unknown[]>> {
  const sqlite = t.storage.sqlite!;
  return Object.fromEntries(
    DUMPS.map((q) => {
      const rows = sqlite.prepare(q).raw().all() as unknown[][];
      return [q, rows.map((r) => JSON.stringify(r)).sort()];
    }),
  );
}

/**
 * The CLI on the embedded engine writes an import's visits on a thread of its own while it reads on
 * (rollups/sqlite-import-writer.ts); a server's import writes them in its own short transactions. Both must leave
 * the same rows, and the CLI's must stay whole when its process is killed mid-import and the import is run again.
 */
describe.skipIf(missing.mysql !== null)(unless(missing.mysql, 'ferry import from YOURLS on MariaDB'), () => {
  const viaCli = useTestApp('sqlite');
  const viaServer = useTestApp('sqlite');
  let db: TestMysqlDatabase;
  beforeAll(async () => {
    db = await createMysqlDatabase(process.env.TEST_MYSQL_URL!);
    for (const sql of yourlsTables()) await db.query(sql);
    const keywords = Array.from({ length: KEYWORDS }, (_, k) => `kw${k.toString(36)}`);
    await db.query(
      'insert into yourls_url (keyword, url, title, timestamp, ip, clicks) values ' +
        keywords.map(() => '(?, ?, null, ?, ?, 0)').join(', '),
      keywords.flatMap((k, i) => [k, `https://example.com/${k}`, `2024-01-0${1 + (i % 9)} 00:00:00`, '127.0.0.1']),
    );
    // Uneven histories: keyword k has about 2k visits, from 150 addresses, 12 agents (a bot among them), 9 referrers.
    const rows: unknown[][] = [];
    for (let v = 0; rows.length < VISITS; v += 1) {
      const k = Math.floor(Math.sqrt(v % (KEYWORDS * KEYWORDS))) % KEYWORDS;
      const at = new Date(Date.UTC(2024, 1, 1) + v * 61_000).toISOString().slice(0, 19).replace('T', ' ');
      const agent = v % 12 === 0 ? 'Googlebot/2.1' : `Mozilla/5.0 (X11; Linux x86_64) Firefox/${100 + (v % 11)}.0`;
      const referrer = v % 9 === 0 ? 'direct' : `https://site${v % 8}.example/p`;
      rows.push([at, keywords[k], referrer, agent, `198.51.100.${v % 150}`, v % 5 === 0 ? '' : 'DE']);
    }
    for (let i = 0; i < rows.length; i += 2_000) {
      const part = rows.slice(i, i + 2_000);
      await db.query(
        'insert into yourls_log (click_time, shorturl, referrer, user_agent, ip_address, country_code) values ' +
          part.map(() => '(?, ?, ?, ?, ?, ?)').join(', '),
        part.flat(),
      );
    }
    await db.query(
      'update yourls_url u join (select shorturl, count(*) as n from yourls_log group by shorturl) l ' +
        'on l.shorturl = u.keyword set u.clicks = l.n',
    );
  });
  afterAll(async () => db?.drop());

  it('when the CLI is killed mid-import and run again, then it leaves exactly the rows a server import does', async () => {
    const admin = await createUser(viaServer, { role: 'admin', status: 'active' });
    await createUser(viaCli, { role: 'admin', status: 'active' });
    const started = await viaServer.request({
      method: 'POST',
      url: '/api/v1/imports',
      token: admin.token,
      payload: { source: 'yourls', database: db.url },
    });
    const job = await finishedJob(viaServer, started, admin.token);
    expect(job).toMatchObject({ state: 'done', progress: { created: KEYWORDS, visits: VISITS } });

    const env = cliEnvFor(viaCli);
    const args = ['import', 'yourls', '--database', db.url, '--json'];
    const first = startFerry(args, env);
    const counted = viaCli.storage
      .sqlite!.prepare<[], number>('select coalesce(max(visits), 0) from import_jobs')
      .pluck();
    for (let i = 0; i < 3_000 && counted.get()! === 0; i += 1) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    await first.done;
    const cut = counted.get()!;
    expect(cut).toBeGreaterThan(0);
    expect(cut).toBeLessThan(VISITS); // killed part way, with some chunks committed

    const again = await runFerry(args, env);
    expect(again.status, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ state: 'done', failed: 0, visits: VISITS - cut });
    expect(await dump(viaCli)).toEqual(await dump(viaServer));
  });
});
