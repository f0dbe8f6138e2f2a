import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createLink, createUser, visit } from '../helpers/factories.js';
import { waitFor } from '../helpers/scale-out.js';
import { missing, unless } from '../helpers/skip.js';

/**
 * Two API instances on one PostgreSQL database: what one changes, the other follows within a second (SPEC §13),
 * through the outbox woken by LISTEN/NOTIFY (infra/outbox-feed.ts) — also when the notification is lost because
 * the listening connection broke.
 */
describe.runIf(missing.postgres === null)(unless(missing.postgres, 'redirect cache across instances'), () => {
  let a: TestApp;
  let b: TestApp;
  let admin: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    // Two instances in one test process share one event loop (never so in production): one's start-up
    // would count as the other's overload, so load shedding is off here.
    const env = { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' };
    a = await createTestApp('postgres', { env });
    b = await createTestApp('postgres', { env, databaseUrl: a.config.databaseUrl!, redisPrefix: a.redisPrefix });
    admin = await createUser(a, { role: 'admin', status: 'active' });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const create = (t: TestApp, payload: Record<string, unknown> = {}) =>
    createLink(t, { original_url: 'https://example.com/shared', ...payload }, admin.token);
  const patch = async (t: TestApp, code: string, body: Record<string, unknown>) =>
    t.request({ method: 'PATCH', url: `/api/v1/links/${code}`, payload: body, token: admin.token });
  /**
   * Makes sure `t` serves `code` from its cache: once the notification of the link's creation has been heard
   * (it may arrive after a first visit and drop what that visit cached), a visit caches it again, and a change
   * written behind the API's back (no notification) does not show.
   */
  const cachedOn = async (t: TestApp, code: string, location: string) => {
    // A listener that connects again clears its cache (what changed meanwhile was not heard): after a test
    // that broke the connections, that clear could fall between the two visits below.
    await waitFor('both instances to listen', async () => (await listeners()) >= 2, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await visit(t, code)).headers.location).toBe(location);
    await a.storage.db
      .updateTable('links')
      .set({ original_url: 'https://example.com/behind-the-back' })
      .where('short_code', '=', code)
      .execute();
    expect((await visit(t, code)).headers.location).toBe(location);
  };
  const onListeners = async (select: string) => {
    const client = new pg.Client({ connectionString: a.config.databaseUrl! });
    await client.connect();
    const res = await client.query(
      `select ${select} from pg_stat_activity where application_name = 'ferry-link-cache' and datname = current_database()`,
    );
    await client.end();
    return res;
  };
  /** Kills every listening connection of this database, as a network failure would. */
  const killListeners = async () => (await onListeners('pg_terminate_backend(pid)')).rowCount ?? 0;
  /** How many listening connections this database has (one per instance when both listen). */
  const listeners = async () => Number((await onListeners('count(*)::int as n')).rows[0].n);

  it('when one instance deletes a link that the other has cached, then the other stops redirecting within a second', async () => {
    const link = await create(a);
    await cachedOn(b, link.short_code, 'https://example.com/shared');
    expect(
      (await a.request({ method: 'DELETE', url: `/api/v1/links/${link.short_code}`, token: admin.token })).status,
    ).toBe(204);
    const deletedAt = Date.now();
    await waitFor('b to forget the deleted link', async () => (await visit(b, link.short_code)).status === 404, 1_000);
    expect(Date.now() - deletedAt).toBeLessThan(1_000);
    expect((await visit(a, link.short_code)).status).toBe(404);
  });

  it('when one instance creates a custom code the other has cached as missing, then the other redirects it within a second', async () => {
    const code = `c${Math.random().toString(36).slice(2, 8)}`;
    expect((await visit(b, code)).status).toBe(404); // a cached miss (5 s without a notification)
    await create(a, { short_code: code });
    await waitFor('b to forget its cached miss', async () => (await visit(b, code)).status === 302, 1_000);
  });

  it('when one instance removes an alias that the other has cached, then the other stops redirecting it within a second', async () => {
    const alias = `shared-${Math.random().toString(36).slice(2, 10)}`;
    const link = await create(a, { aliases: [alias] });
    await waitFor('both instances to listen', async () => (await listeners()) >= 2, 5_000);
    await waitFor('b to redirect the alias', async () => (await visit(b, alias)).status === 302, 1_000);
    expect((await visit(b, alias)).status).toBe(302); // from b's cache now
    expect((await patch(a, link.short_code, { aliases: null })).status).toBe(200);
    const removedAt = Date.now();
    expect((await visit(a, alias)).status).toBe(404);
    await waitFor('b to forget the removed alias', async () => (await visit(b, alias)).status === 404, 1_000);
    expect(Date.now() - removedAt).toBeLessThan(1_000);
  });

  it('when one instance PATCHes a link, then it redirects to the new target at once and the other within a second', async () => {
    const link = await create(a, { original_url: 'https://example.com/before' });
    await cachedOn(b, link.short_code, 'https://example.com/before');
    expect((await patch(a, link.short_code, { original_url: 'https://example.com/after' })).status).toBe(200);
    const patchedAt = Date.now();
    expect((await visit(a, link.short_code)).headers.location).toBe('https://example.com/after');
    await waitFor(
      'b to follow the PATCH',
      async () => (await visit(b, link.short_code)).headers.location === 'https://example.com/after',
      1_000,
    );
    expect(Date.now() - patchedAt).toBeLessThan(1_000);
  });

  it('when an admin disables a link, then another instance answers 410 LINK_DISABLED, and 302 once enabled, each within 1 s', async () => {
    const link = await create(a, { original_url: 'https://example.com/moderated' });
    await cachedOn(b, link.short_code, 'https://example.com/moderated');
    expect((await patch(a, link.short_code, { disabled: true, disabled_reason: 'Phishing' })).status).toBe(200);
    const disabledAt = Date.now();
    expect((await visit(a, link.short_code)).status).toBe(410);
    await waitFor('b to refuse the disabled link', async () => (await visit(b, link.short_code)).status === 410, 1_000);
    expect(Date.now() - disabledAt).toBeLessThan(1_000);
    expect((await patch(a, link.short_code, { disabled: false })).status).toBe(200);
    const enabledAt = Date.now();
    await waitFor('b to redirect again', async () => (await visit(b, link.short_code)).status === 302, 1_000);
    expect(Date.now() - enabledAt).toBeLessThan(1_000);
  });

  it('when the listening connection breaks as a link changes (notification lost), then the other instance follows within 1 s', async () => {
    const link = await create(a, { original_url: 'https://example.com/v1' });
    await cachedOn(b, link.short_code, 'https://example.com/v1');
    expect(await killListeners()).toBeGreaterThanOrEqual(2); // a's and b's
    expect((await patch(a, link.short_code, { original_url: 'https://example.com/v2' })).status).toBe(200);
    const patchedAt = Date.now();
    // Keep b cut off for two seconds: the bound must not rest on a quick reconnection.
    const seen: Array<{ at: number; location: string | undefined }> = [];
    while (Date.now() - patchedAt < 2_000) {
      await killListeners();
      seen.push({
        at: Date.now() - patchedAt,
        location: (await visit(b, link.short_code)).headers.location as string | undefined,
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const stale = seen.filter((s) => s.location !== 'https://example.com/v2');
    expect(
      stale.every((s) => s.at < 1_000),
      JSON.stringify(stale),
    ).toBe(true);
    // Visits went on after the bound (how many depends on the machine's load: each round kills listeners too).
    expect(seen.filter((s) => s.at >= 1_000).length).toBeGreaterThanOrEqual(3);
    expect((await visit(b, link.short_code)).headers.location).toBe('https://example.com/v2');
    await waitFor('both instances to listen again', async () => (await listeners()) >= 2, 5_000);
  });

  it('when a link is changed in SQL, past the API (no notification), then the cache TTL bounds how long its old target lasts', async () => {
    const link = await create(a);
    await cachedOn(b, link.short_code, 'https://example.com/shared');
    // An entry gets between half and all of the 30 s positive TTL (a small cache: DEFAULT_LINK_CACHE).
    b.clock.advance(14_000);
    expect((await visit(b, link.short_code)).headers.location).toBe('https://example.com/shared');
    // Past its TTL the entry is answered once more while it is re-read in the background (the visit does not
    // wait for the database); the re-read's answer is what the next visits get.
    b.clock.advance(16_000);
    expect((await visit(b, link.short_code)).headers.location).toBe('https://example.com/shared');
    await waitFor(
      'b to re-read the stale entry',
      async () => (await visit(b, link.short_code)).headers.location === 'https://example.com/behind-the-back',
      2_000,
    );
  });

  it('when a cached link goes unvisited past its TTL and the stale window, then its next visit reads the database first', async () => {
    const link = await create(a);
    await cachedOn(b, link.short_code, 'https://example.com/shared');
    b.clock.advance(30_000 + 120_000); // DEFAULT_LINK_CACHE: positiveTtlMs + staleMs
    expect((await visit(b, link.short_code)).headers.location).toBe('https://example.com/behind-the-back');
  });
});
