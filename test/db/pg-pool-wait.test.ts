import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { missing, unless } from '../helpers/skip.js';
import { CONNECT_TIMEOUT_MS } from '../../src/db/pg-connection-faults.js';
import { useTestApp } from '../helpers/fixtures.js';

/**
 * A request queued behind busy but healthy connections waits its turn: only failing to connect is "the database
 * is unavailable" (503). pg-pool's own connectionTimeoutMillis also bounds the wait for a busy pool, which made a
 * burst of creations on a loaded machine answer 503.
 */
describe.runIf(missing.postgres === null)(
  unless(missing.postgres, 'a PostgreSQL pool that is busy, not broken'),
  () => {
    const t = useTestApp('postgres', { env: { DB_POOL_MAX: '1' } });

    it('when the only connection is busy for longer than the connect timeout, then a request waits for it and succeeds', async () => {
      // Hold the pool's single connection past CONNECT_TIMEOUT_MS; the request below queues behind it.
      const held = t.storage.db.transaction().execute(async (trx) => {
        await sql`select pg_sleep(${(CONNECT_TIMEOUT_MS + 1_500) / 1000})`.execute(trx);
      });
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        payload: { original_url: 'https://example.com/queued' },
      });
      await held;
      expect(res.status).toBe(201);
    });
  },
);
