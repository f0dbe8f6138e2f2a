import { describe, expect, it } from 'vitest';
import { createStorage } from '../../src/db/database.js';
import { changeMessage, LINK_CHANGES_CHANNEL } from '../../src/infra/pg-link-cache-bus.js';
import { createTestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';
import { waitFor } from '../helpers/scale-out.js';

/**
 * Link changes made beside a running server on the embedded engine (the `ferry` CLI's process): announced in
 * link_changes (db/dialect.ts) and read by the server (infra/sqlite-link-change-feed.ts).
 */
describe('link changes of another process on the embedded engine', () => {
  it('when another process changes a link the server caches for good, then the redirect follows once the change is announced', async () => {
    const t = await createTestApp('sqlite');
    const beside = createStorage(t.config, { visitor: true });
    try {
      const owner = await createUser(t);
      const created = await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/before' }, token: owner.token });
      const code = created.body.short_code as string;
      expect((await t.request({ url: `/${code}` })).headers.location).toBe('https://example.com/before');
      // What `ferry links disable` or a future CLI change does: the change and its message in one transaction.
      await beside.db.transaction().execute(async (tx) => {
        await tx.updateTable('links').set({ original_url: 'https://example.com/after' }).where('short_code', '=', code).execute();
        await beside.dialect.notify(tx, LINK_CHANGES_CHANNEL, changeMessage('*', code));
      });
      await waitFor('the redirect to follow', async () => (await t.request({ url: `/${code}` })).headers.location === 'https://example.com/after', 5_000);
    } finally {
      await beside.close();
      await t.close();
    }
  });

  it('when the server changes links itself, then it leaves no message behind (it drops its cache entries itself)', async () => {
    const t = await createTestApp('sqlite');
    try {
      const res = await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://example.com/own' } });
      expect(res.status).toBe(201);
      expect(t.storage.sqlite!.prepare('select count(*) as n from link_changes').get()).toEqual({ n: 0 });
    } finally {
      await t.close();
    }
  });
});
