import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { MIGRATION_NAMES } from '../../src/db/migrator.js';
import { createTestApp, freshPostgresDatabase } from '../helpers/app.js';
import { missing, unless } from '../helpers/skip.js';

/** Several instances starting at once on a fresh database (SPEC §11, STYLE rule 6): one of them migrates. */
describe.runIf(missing.postgres === null)(
  unless(missing.postgres, 'migrations when several instances start at once'),
  () => {
    it(
      'when 3 apps start concurrently on one fresh PostgreSQL database, then each migration is applied exactly once and all of them serve',
      { timeout: 120_000 },
      async () => {
        const db = await freshPostgresDatabase();
        // Three start-ups in one process block its event loop for a while: the overload bound is not the subject here.
        const env = { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' };
        const apps = await Promise.all([1, 2, 3].map(() => createTestApp('postgres', { databaseUrl: db.url, env })));
        try {
          const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
            apps[0]!.storage.db,
          );
          expect(applied.rows.map((r) => r.name)).toEqual([...MIGRATION_NAMES]);
          expect(MIGRATION_NAMES).toEqual(expect.arrayContaining(['008-link-management', '009-api-keys']));
          // Ids come from the one database: sign-ups spread over the three apps get distinct ids.
          const ids = await Promise.all(
            apps.map(async (t, i) => {
              const res = await t.request({
                method: 'POST',
                url: '/api/v1/users',
                payload: {
                  username: `concurrent${i}`,
                  email: `concurrent${i}@example.com`,
                  password: 'long-enough-pw',
                },
              });
              expect(res.status, res.text).toBe(201);
              return res.body.id as number;
            }),
          );
          expect(new Set(ids).size).toBe(3);
          for (const t of apps) expect((await t.request({ url: '/readyz' })).status).toBe(200);
        } finally {
          await Promise.all(apps.map((t) => t.close()));
          await db.drop();
        }
      },
    );
  },
);
