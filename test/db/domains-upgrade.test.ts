import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createStorage } from '../../src/db/database.js';
import { migrateUpTo } from '../../src/db/migrator.js';
import { createTestApp, engines, freshPostgresDatabase, type Engine } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';
import { startDnsServer } from '../helpers/dns-server.js';

const HOUR = 3_600_000;
const PREVIOUS_RELEASE = '013-click-journal-windows';

/**
 * A database made by the previous release's migrations (up to 013), with links, tags, clicks, rollups and a
 * tombstone in it, upgraded by the app's start-up (migration 020 makes codes unique per domain): every link and
 * click is kept, on the default domain, with its id.
 */
async function seedPreviousRelease(db: Kysely<unknown>, now: number): Promise<number[]> {
  const hour = Math.floor(now / HOUR) * HOUR - HOUR;
  await sql`insert into link_codes (code, retired_at, retired_reason) values ('old1', null, null), ('old2', null, null), ('gone1', ${now - HOUR}, 'deleted'), ('late1', ${now - HOUR}, 'expired')`.execute(
    db,
  );
  const ids = (
    await sql<{
      id: number;
    }>`insert into links (short_code, original_url, created_at, updated_at, tags, click_count) values
    ('old1', 'https://example.com/one', ${now - 2 * HOUR}, ${now - 2 * HOUR}, 'keep,old', 3),
    ('old2', 'https://example.com/two', ${now - 2 * HOUR}, ${now - 2 * HOUR}, '', 0) returning id`.execute(db)
  ).rows.map((r) => Number(r.id));
  const one = ids[0]!;
  await sql`insert into link_tags (link_id, tag) values (${one}, 'keep'), (${one}, 'old')`.execute(db);
  for (let i = 0; i < 3; i += 1) {
    await sql`insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer) values (${one}, 'old1', ${hour + i}, '192.0.2.1', 'curl/8', null)`.execute(
      db,
    );
  }
  await sql`insert into link_click_hourly (link_id, hour_start, clicks, bots) values (${one}, ${hour}, 3, 0)`.execute(
    db,
  );
  // The last link was deleted before the upgrade: its id must not come back.
  await sql`delete from links where id = ${ids[1]!}`.execute(db);
  return ids;
}

/**
 * A database from before migration 030 (clicks keep their domain): a domain, a link on it and one on the default
 * domain, each with a click. The upgrade gives each click its link's domain.
 */
async function seedBeforeClickDomains(db: Kysely<unknown>, now: number): Promise<number[]> {
  const domain = (
    await sql<{ id: number }>`insert into domains (hostname, token, verified_at, created_at, updated_at)
    values ('before.example.test', 'before-token', ${now - HOUR}, ${now - HOUR}, ${now - HOUR}) returning id`.execute(
      db,
    )
  ).rows[0]!.id;
  await sql`insert into link_codes (domain_id, code) values (${domain}, 'dom1'), (0, 'def1')`.execute(db);
  const ids = (
    await sql<{
      id: number;
    }>`insert into links (short_code, domain_id, original_url, created_at, updated_at, tags, click_count) values
    ('dom1', ${domain}, 'https://example.com/d', ${now - HOUR}, ${now - HOUR}, '', 1),
    ('def1', 0, 'https://example.com/e', ${now - HOUR}, ${now - HOUR}, '', 1) returning id`.execute(db)
  ).rows.map((r) => Number(r.id));
  await sql`update link_codes set link_id = ${ids[0]!} where code = 'dom1'`.execute(db);
  await sql`update link_codes set link_id = ${ids[1]!} where code = 'def1'`.execute(db);
  for (const [id, code] of [
    [ids[0]!, 'dom1'],
    [ids[1]!, 'def1'],
  ] as const) {
    await sql`insert into clicks (link_id, short_code, clicked_at, ip, user_agent, referrer) values (${id}, ${code}, ${now - HOUR}, '192.0.2.1', 'curl/8', null)`.execute(
      db,
    );
  }
  return ids;
}

/**
 * A database from before migration 034 (claims of a host name): a verified domain with a link, an unverified
 * one, and a third that was deleted (its id must not come back).
 */
async function seedBeforeClaims(db: Kysely<unknown>, now: number): Promise<number[]> {
  const add = async (hostname: string, verifiedAt: number | null) => {
    const token = `token${hostname.split('.')[0]}`;
    return (
      await sql<{ id: number }>`insert into domains (hostname, token, verified_at, created_at, updated_at)
      values (${hostname}, ${token}, ${verifiedAt}, ${now - HOUR}, ${now - HOUR}) returning id`.execute(db)
    ).rows[0]!.id;
  };
  const kept = Number(await add('kept.example.test', now - HOUR));
  const open = Number(await add('open.example.test', null));
  const gone = Number(await add('gone.example.test', null));
  await sql`delete from domains where id = ${gone}`.execute(db);
  await sql`insert into link_codes (domain_id, code) values (${kept}, 'kept1')`.execute(db);
  const link = (
    await sql<{
      id: number;
    }>`insert into links (short_code, domain_id, original_url, created_at, updated_at, tags, click_count)
    values ('kept1', ${kept}, 'https://example.com/kept', ${now - HOUR}, ${now - HOUR}, '', 0) returning id`.execute(db)
  ).rows[0]!.id;
  await sql`update link_codes set link_id = ${link} where domain_id = ${kept} and code = 'kept1'`.execute(db);
  return [kept, open, gone];
}

async function previousReleaseDatabase(
  engine: Engine,
  now: number,
  release = PREVIOUS_RELEASE,
  seed = seedPreviousRelease,
): Promise<{ ids: number[]; env: { dataDir?: string; databaseUrl?: string }; drop: () => Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-upgrade-'));
  const fresh = engine === 'postgres' ? await freshPostgresDatabase() : null;
  const storage = createStorage(
    loadConfig({
      DATA_DIR: dataDir,
      JWT_SECRET: 'test-secret-that-is-at-least-32-bytes-long!',
      ...(fresh ? { DATABASE_URL: fresh.url } : {}),
    }),
  );
  let ids: number[];
  try {
    await migrateUpTo(storage.db as unknown as Kysely<unknown>, storage.dialect, release);
    ids = await seed(storage.db as unknown as Kysely<unknown>, now);
  } finally {
    await storage.close();
  }
  return {
    ids,
    env: fresh ? { databaseUrl: fresh.url } : { dataDir },
    drop: async () => {
      await fresh?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe.each(engines)('upgrading a database of the previous release on %s', (engine) => {
  it('when the app starts on it, then every link and click is kept on the default domain, and codes become per-domain', async () => {
    const now = Date.now();
    const old = await previousReleaseDatabase(engine, now);
    const dns = await startDnsServer();
    const t = await createTestApp(engine, {
      ...old.env,
      env: { PUBLIC_BASE_URL: 'https://fry.example', DNS_SERVERS: dns.address },
    });
    try {
      const admin = await createUser(t, { role: 'admin', status: 'active' });
      const one = await t.request({ url: '/api/v1/links/old1', token: admin.token });
      expect(one.status, one.text).toBe(200);
      expect(one.body).toMatchObject({
        id: old.ids[0],
        domain: null,
        short_url: 'https://fry.example/old1',
        tags: ['keep', 'old'],
        click_count: 3,
      });
      const stats = await t.request({ url: '/api/v1/links/old1/stats', token: admin.token });
      expect(stats.body.total_clicks).toBe(3);
      expect((await t.request({ url: '/api/v1/links/old1/clicks', token: admin.token })).body.data).toHaveLength(3);
      expect((await t.app.inject({ url: '/old1' })).headers.location).toBe('https://example.com/one');
      expect((await t.app.inject({ url: '/gone1' })).statusCode).toBe(404);
      expect((await t.app.inject({ url: '/late1' })).statusCode).toBe(410);
      // The tombstones still hold their codes on the default domain; a new link gets an id after the old ones.
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/links',
            payload: { original_url: 'https://evil.example/', short_code: 'gone1' },
          })
        ).status,
      ).toBe(409);
      const fresh = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        payload: { original_url: 'https://example.com/new' },
      });
      expect(fresh.body.id).toBeGreaterThan(old.ids[1]!);
      expect((await t.app.inject({ url: '/old2' })).statusCode).toBe(404); // its link was deleted before: no tombstone was made then
      // The same code on a domain is another link.
      const domain = await t.request({
        method: 'POST',
        url: '/api/v1/domains',
        token: admin.token,
        payload: { hostname: 'upgrade.example.test' },
      });
      const same = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: admin.token,
        payload: { original_url: 'https://example.com/d', short_code: 'old1', domain: domain.body.hostname },
      });
      expect(same.status, same.text).toBe(201);
    } finally {
      await t.close();
      await dns.close();
      await old.drop();
    }
  });

  it("when migration 030 runs on clicks made before it, then each click record keeps its link's domain", async () => {
    const now = Date.now();
    const old = await previousReleaseDatabase(engine, now, '027-link-changes', seedBeforeClickDomains);
    const t = await createTestApp(engine, { ...old.env, env: { PUBLIC_BASE_URL: 'https://fry.example' } });
    try {
      const admin = await createUser(t, { role: 'admin', status: 'active' });
      const onDomain = await t.request({
        url: '/api/v1/links/dom1/clicks?domain=before.example.test',
        token: admin.token,
      });
      expect(onDomain.status, onDomain.text).toBe(200);
      expect(onDomain.body.data.map((c: { domain: string | null }) => c.domain)).toEqual(['before.example.test']);
      const onDefault = await t.request({ url: '/api/v1/links/def1/clicks', token: admin.token });
      expect(onDefault.body.data.map((c: { domain: string | null }) => c.domain)).toEqual([null]);
    } finally {
      await t.close();
      await old.drop();
    }
  });

  it('when migration 034 runs on domains made before it, then each keeps its id, token and links; an open name takes claims', async () => {
    const now = Date.now();
    const old = await previousReleaseDatabase(engine, now, '030-click-domains', seedBeforeClaims);
    const [kept, open, gone] = old.ids as [number, number, number];
    const t = await createTestApp(engine, { ...old.env, env: { PUBLIC_BASE_URL: 'https://fry.example' } });
    try {
      const admin = await createUser(t, { role: 'admin', status: 'active' });
      const user = await createUser(t, { status: 'active' });
      const record = await t.request({ url: `/api/v1/domains/${kept}`, token: admin.token });
      expect(record.body).toMatchObject({ hostname: 'kept.example.test', status: 'active' });
      expect(record.body.verification.txt_value).toBe('ferry-verification=tokenkept');
      const visit = await t.app.inject({ url: '/kept1', headers: { host: 'kept.example.test' } });
      expect(visit.headers.location).toBe('https://example.com/kept');
      const claim = (hostname: string) =>
        t.request({ method: 'POST', url: '/api/v1/domains', token: user.token, payload: { hostname } });
      expect((await claim('kept.example.test')).status).toBe(409);
      const second = await claim('open.example.test');
      expect(second.status, second.text).toBe(201);
      expect(second.body.id).toBeGreaterThan(gone);
      expect((await t.request({ url: `/api/v1/domains/${open}`, token: admin.token })).body.hostname).toBe(
        'open.example.test',
      );
    } finally {
      await t.close();
      await old.drop();
    }
  });
});
