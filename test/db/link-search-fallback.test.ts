import { PassThrough } from 'node:stream';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, freshPostgresDatabase, type TestApp } from '../helpers/app.js';
import { missing, unless } from '../helpers/skip.js';
import { createLink, createUser } from '../helpers/factories.js';

/**
 * Migration 039 on a PostgreSQL role that may not create extensions (no CREATE on the database, so not even the
 * trusted pg_trgm): the start still succeeds, says once that the search scans, and `q` answers as before.
 */
describe.runIf(missing.postgres === null)(unless(missing.postgres, 'link search without pg_trgm on postgres'), () => {
  let t: TestApp | null = null;
  let cleanup: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await t?.close();
    await cleanup?.();
    t = null;
    cleanup = null;
  });

  it('when CREATE EXTENSION is refused, then the migration passes, start-up warns once, and q still finds links', async () => {
    const db = await freshPostgresDatabase();
    const role = `ferry_noext_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`create role ${role} login`);
    await admin.query(`revoke create on database ${new URL(db.url).pathname.slice(1)} from public`);
    await admin.query(`grant create, usage on schema public to ${role}`);
    cleanup = async () => {
      await admin.end();
      await db.drop();
      const server = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await server.connect();
      await server.query(`drop role if exists ${role}`);
      await server.end();
    };
    const asRole = Object.assign(new URL(db.url), { username: role }).toString();
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    t = await createTestApp('postgres', { databaseUrl: asRole, logStream: stream });
    const warnings = text.split('\n').filter((l) => l.includes('link search without an index'));
    expect(warnings).toHaveLength(1);
    expect((await admin.query("select 1 from pg_extension where extname = 'pg_trgm'")).rowCount).toBe(0);
    const user = await createUser(t);
    const link = await createLink(
      t,
      { original_url: 'https://scan.example/still-found', title: 'Found by the scan' },
      user.token,
    );
    const res = await t.request({
      url: `/api/v1/users/${user.id}/links?q=${encodeURIComponent('by the SCAN')}`,
      token: user.token,
    });
    expect(res.body.data.map((l: { short_code: string }) => l.short_code)).toEqual([link.short_code]);
  });
});
