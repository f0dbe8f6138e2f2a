import { describe, expect, it } from 'vitest';
import { createStorage } from '../../src/db/database.js';
import { openOutboxCursor, OUTBOX_RETENTION_MS, type OutboxEvent } from '../../src/db/outbox.js';
import { deploymentPaginator } from '../../src/lib/pagination.js';
import { createLinksRepository } from '../../src/modules/links/links.repository.js';
import { createUsersRepository } from '../../src/modules/users/users.repository.js';
import { engines } from '../helpers/app.js';
import { createLink, createUser, visit } from '../helpers/factories.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/scale-out.js';
import { unless } from '../helpers/skip.js';
import { importCsv } from '../modules/imports/imports.helpers.js';

/**
 * The typed outbox (db/outbox.ts, migration 038): every change of links, aliases, domains, users, API keys and
 * imports writes its event in its own transaction; the redirect cache of another instance or process follows
 * the outbox (infra/outbox-feed.ts); the sweep drops events past their retention.
 */
const unique = () => Math.random().toString(36).slice(2, 8);

describe.each(engines)('the outbox on %s', (engine) => {
  const t = useTestApp(engine, { env: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' } });
  const admin = useUser(t, { role: 'admin', status: 'active' });

  const outbox = () => t.storage.db.selectFrom('outbox');
  const lastId = async () => {
    const row = await outbox()
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  };
  /** The events written after `after`, in order, as `{ type, data }`. */
  const eventsAfter = async (after: number): Promise<OutboxEvent[]> => {
    const rows = await outbox().select(['type', 'payload']).where('id', '>', after).orderBy('id').execute();
    return rows.map((r) => ({ type: r.type, data: JSON.parse(r.payload) }) as OutboxEvent);
  };
  const request = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, token = admin.token) =>
    t.request({ method, url, token, ...(payload ? { payload } : {}) });

  it('when a link is created, changed, loses its alias, is disabled and deleted, then each writes one', async () => {
    const from = await lastId();
    const alias = `al-${unique()}`;
    const link = await createLink(t, { original_url: 'https://example.com/one', aliases: [alias] }, admin.token);
    const code = link.short_code;
    const patch = async (body: object) => (await request('PATCH', `/api/v1/links/${code}`, body)).status;
    expect(await patch({ original_url: 'https://example.com/two', aliases: null })).toBe(200);
    expect(await patch({ disabled: true, disabled_reason: 'Phishing' })).toBe(200);
    expect((await request('DELETE', `/api/v1/links/${code}`)).status).toBe(204);
    const names = { link_id: link.id, domain_id: 0, names: [code] };
    expect(await eventsAfter(from)).toEqual([
      { type: 'link.created', data: { ...names, names: [code, alias], user_id: admin.id } },
      {
        type: 'link.updated',
        data: {
          ...names,
          changed: expect.arrayContaining(['original_url', 'aliases']),
          before: { domain_id: 0, names: [code, alias] },
        },
      },
      {
        type: 'link.updated',
        data: {
          ...names,
          changed: expect.arrayContaining(['disabled_at', 'disabled_reason']),
          before: { domain_id: 0, names: [code] },
        },
      },
      { type: 'link.deleted', data: { ...names, reason: 'deleted' } },
    ]);
  });

  it('when users, API keys, domains and an import change, then each change writes its typed event', async () => {
    const from = await lastId();
    const user = await createUser(t);
    const keys = `/api/v1/users/${user.id}/api-keys`;
    expect((await request('PATCH', `/api/v1/users/${user.id}`, { email: `new-${user.email}` })).status).toBe(200);
    const key = await request('POST', keys, { name: 'k', scopes: ['links:read'] }, user.token);
    expect(key.status).toBe(201);
    expect((await request('DELETE', `${keys}/${key.body.id}`, undefined, user.token)).status).toBe(204);
    const domain = await request('POST', '/api/v1/domains', { hostname: `d${unique()}.example.org` });
    expect(domain.status).toBe(201);
    expect((await request('DELETE', `/api/v1/domains/${domain.body.id}`)).status).toBe(204);
    const job = await importCsv(t, admin.token, `url,code\r\nhttps://example.com/imported,imp${unique()}\r\n`);
    expect(job.state).toBe('done');
    expect((await request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(204);
    const events = await eventsAfter(from);
    expect(events).toEqual([
      { type: 'user.created', data: { user_id: user.id } },
      { type: 'user.updated', data: { user_id: user.id } },
      { type: 'api_key.created', data: { api_key_id: key.body.id, user_id: user.id } },
      { type: 'api_key.revoked', data: { api_key_id: key.body.id, user_id: user.id } },
      { type: 'domain.created', data: { domain_id: domain.body.id } },
      { type: 'domain.deleted', data: { domain_id: domain.body.id } },
      { type: 'links.imported', data: { count: 1, domain_ids: [0] } },
      { type: 'import.completed', data: { import_id: job.id, owner_id: admin.id, state: 'done' } },
      { type: 'user.deleted', data: { user_id: user.id } },
    ]);
  });

  it('when a write fails or its transaction rolls back, then it leaves no event', async () => {
    const alias = `taken-${unique()}`;
    await createLink(t, { aliases: [alias] }, admin.token);
    const from = await lastId();
    // The alias is taken: the link's insert fails, with its event.
    expect(
      (await request('POST', '/api/v1/links', { original_url: 'https://example.com/x', aliases: [alias] })).status,
    ).toBe(409);
    // A user's insert whose surrounding transaction rolls back afterwards.
    const users = createUsersRepository(t.storage.db, deploymentPaginator(new Uint8Array(32)), t.storage.dialect);
    const name = `rolled${unique()}`;
    await expect(
      t.storage.db.transaction().execute(async (tx) => {
        await users.insert(
          {
            username: name,
            username_lower: name,
            email: `${name}@example.com`,
            email_lower: `${name}@example.com`,
            password_hash: 'x',
            role: 'user',
            status: 'active',
            name: null,
            age: null,
            created_at: 1,
            updated_at: 1,
            version: 1,
          },
          tx,
        );
        const inside = await tx.selectFrom('outbox').select('type').where('id', '>', from).execute();
        expect(inside.map((r) => r.type)).toEqual(['user.created']);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await eventsAfter(from)).toEqual([]);
  });

  it('when another process changes a link this instance caches, then the instance follows the outbox', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/before' }, admin.token);
    // Served from the cache from now on: a change behind the API's back (no event) does not show.
    await waitFor(
      'the link to be cached',
      async () => {
        const location = (await visit(t, link.short_code)).headers.location;
        await t.storage.db
          .updateTable('links')
          .set({ original_url: 'https://example.com/behind' })
          .where('id', '=', link.id)
          .execute();
        return (await visit(t, link.short_code)).headers.location === location;
      },
      5_000,
    );
    // Another process's storage (the CLI's, or another instance's), writing through the links repository.
    const beside = createStorage(t.config);
    try {
      const links = createLinksRepository(beside, deploymentPaginator(new Uint8Array(32)), 'beside');
      const row = (await links.findByCode(link.short_code))!;
      await links.update(row, { original_url: 'https://example.com/after' }, null, Date.now());
      const follows = async () => (await visit(t, link.short_code)).headers.location === 'https://example.com/after';
      await waitFor('the redirect to follow', follows, 5_000);
    } finally {
      await beside.close();
    }
  });

  it('when events are older than the retention, then the sweep removes them and keeps the others', async () => {
    const now = t.clock.now();
    const old = {
      type: 'user.updated',
      payload: '{"user_id":1}',
      origin: null,
      created_at: now - OUTBOX_RETENTION_MS - 1,
    };
    const fresh = { ...old, created_at: now - OUTBOX_RETENTION_MS + 60_000 };
    const ids = await t.storage.db.insertInto('outbox').values([old, fresh]).returning('id').execute();
    await t.app.runJob('sweep-outbox');
    const left = await outbox()
      .select('id')
      .where(
        'id',
        'in',
        ids.map((r) => r.id),
      )
      .execute();
    expect(left.map((r) => Number(r.id))).toEqual([Number(ids[1]!.id)]);
  });

  // Only PostgreSQL hands out ids before commit; SQLite has one writer, so its ids commit in order.
  const lateCommit = 'when a transaction commits an id below one read, then the cursor still reads it';
  it.runIf(engine === 'postgres')(
    unless(engine === 'postgres' ? null : 'PostgreSQL only (ids handed out before commit)', lateCommit),
    async () => {
      const cursor = await openOutboxCursor(t.storage.db, 'end');
      const row = (type: string) => ({ type, payload: '{"user_id":1}', origin: null, created_at: Date.now() });
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let written!: () => void;
      const wroteFirst = new Promise<void>((resolve) => {
        written = resolve;
      });
      // The first transaction takes its id, then waits; the second takes the next id and commits first.
      const first = t.storage.db.transaction().execute(async (tx) => {
        await tx.insertInto('outbox').values(row('user.created')).execute();
        written();
        await held;
      });
      await wroteFirst;
      await t.storage.db.insertInto('outbox').values(row('user.updated')).execute();
      expect((await cursor.read()).map((e) => e.event.type)).toEqual(['user.updated']);
      release();
      await first;
      expect((await cursor.read()).map((e) => e.event.type)).toEqual(['user.created']);
      expect(await cursor.read()).toEqual([]);
    },
  );
});
