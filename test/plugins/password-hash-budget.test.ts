import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../helpers/app.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { createUser, linkCount, login, uniqueName } from '../helpers/factories.js';

/**
 * SPEC §17: every scrypt hash a request causes counts against its caller's PASSWORD_HASHES_PER_MINUTE (the
 * user, the API key, or the client address without a token), checked before any hashing starts.
 */
const BUDGET = 6;
const items = (n: number, password: string | null) =>
  Array.from({ length: n }, (_, i) => ({
    original_url: `https://example.com/${i}`,
    ...(password === null ? {} : { password }),
  }));

describe.each(engines)('password hashing budget on %s', (engine) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const overBudget = (res: { status: number; headers: Record<string, unknown>; body: unknown }) => {
    expectEnvelope(res as never, 429, 'RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect((res.body as { error: { message: string } }).error.message).toMatch(/password-hashes limit is 6 per 60 s/);
  };

  it('when a bulk creation carries more passwords than the budget left, then 429 before any hashing, and nothing is created', async () => {
    t = await createTestApp(engine, { env: { PASSWORD_HASHES_PER_MINUTE: String(BUDGET) } });
    const u = await createUser(t); // two hashes of 127.0.0.1's budget, none of the user's
    const before = await linkCount(t);
    const tooMany = await t.request({
      method: 'POST',
      url: '/api/v1/links/bulk',
      token: u.token,
      payload: { links: items(BUDGET + 1, 'link-password-1') },
    });
    overBudget(tooMany);
    expect(t.app.passwordHashing.status()).toMatchObject({ waiting: 0, running: 0 });
    expect(await linkCount(t)).toBe(before);
    // Items without a password cost nothing; the budget's whole size still fits.
    const fits = await t.request({
      method: 'POST',
      url: '/api/v1/links/bulk',
      token: u.token,
      payload: { links: [...items(BUDGET, 'link-password-1'), ...items(3, null)] },
    });
    expect(fits.status, fits.text).toBe(200);
    expect(fits.body.data.every((r: { status: number }) => r.status === 201)).toBe(true);
    // Its lane is closed with its answer (infra/hash-lanes.ts: no lane open, no hook at every promise).
    expect(t.app.passwordHashing.status()).toMatchObject({ waiting: 0, running: 0, lanes: 0 });
    overBudget(
      await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: u.token,
        payload: { original_url: 'https://example.com/p', password: 'link-password-2' },
      }),
    );
    overBudget(
      await t.request({
        method: 'PATCH',
        url: `/api/v1/links/${fits.body.data[0].link.short_code}`,
        token: u.token,
        headers: { 'content-type': 'application/merge-patch+json' },
        payload: { password: 'link-password-3' },
      }),
    );
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/links',
          token: u.token,
          payload: { original_url: 'https://example.com/free' },
        })
      ).status,
    ).toBe(201);
  });

  it('when an anonymous bulk creation carries 100 passwords, then every item is refused at once and no link is created', async () => {
    t = await createTestApp(engine, { env: { PASSWORD_HASHES_PER_MINUTE: String(BUDGET) } });
    const before = await linkCount(t);
    const started = Date.now();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/links/bulk',
      payload: { links: items(100, 'link-password-1') },
    });
    expect(res.status, res.text).toBe(200);
    expect(
      res.body.data.every(
        (r: { status: number; error?: { details: Array<{ field: string }> } }) =>
          r.status === 400 && r.error?.details.some((d) => d.field === 'password'),
      ),
    ).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000); // no hashing: the issue measured 36 s per such request
    expect(await linkCount(t)).toBe(before);
  });

  it(
    'when sign-ups and logins from one address pass the budget, then 429; ' +
      'another address and a user with a token keep their own',
    async () => {
      t = await createTestApp(engine, { env: { PASSWORD_HASHES_PER_MINUTE: String(BUDGET), REGISTRATION: 'open' } });
      const from = '203.0.113.7';
      const signUp = (remoteAddress: string) =>
        t.request({
          method: 'POST',
          url: '/api/v1/users',
          remoteAddress,
          payload: { username: uniqueName(), email: `${uniqueName()}@example.com`, password: 'correct-horse-battery' },
        });
      const u = await createUser(t);
      const logIn = () =>
        t.request({
          method: 'POST',
          url: '/api/v1/tokens',
          remoteAddress: from,
          payload: { username: u.username, password: u.password },
        });
      for (let i = 0; i < BUDGET - 1; i++) expect((await signUp(from)).status).toBe(201);
      expect((await logIn()).status).toBe(201);
      overBudget(await signUp(from));
      overBudget(await logIn());
      expect((await signUp('203.0.113.8')).status).toBe(201);
      // The user's own budget: a password change checks the current password and hashes the new one (two).
      for (let i = 0; i < BUDGET / 2; i++) {
        const next = `new-password-${i}-long`;
        const res = await t.request({
          method: 'PATCH',
          url: '/api/v1/users/me',
          token: await login(t, u.username, u.password),
          headers: { 'content-type': 'application/merge-patch+json' },
          payload: { password: next, currentPassword: u.password },
        });
        expect(res.status, res.text).toBe(200);
        u.password = next;
      }
      overBudget(
        await t.request({
          method: 'PATCH',
          url: '/api/v1/users/me',
          token: await login(t, u.username, u.password),
          headers: { 'content-type': 'application/merge-patch+json' },
          payload: { password: 'one-more-password', currentPassword: u.password },
        }),
      );
    },
  );

  it(
    'when a visitor tries link passwords past the budget, then 429 with Retry-After, ' +
      'whether the passwords were right or wrong',
    async () => {
      t = await createTestApp(engine, {
        env: { PASSWORD_HASHES_PER_MINUTE: String(BUDGET), LINK_PASSWORD_ATTEMPTS_PER_MINUTE: '1000' },
      });
      const u = await createUser(t);
      const link = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: u.token,
        payload: { original_url: 'https://example.com/secret', password: 'link-password-1' },
      });
      expect(link.status).toBe(201);
      const unlock = (password: string) =>
        t.request({
          url: `/${link.body.short_code}`,
          remoteAddress: '198.51.100.4',
          headers: { authorization: `Basic ${Buffer.from(`x:${password}`).toString('base64')}` },
        });
      for (let i = 0; i < BUDGET; i++)
        expect((await unlock(i % 2 ? 'link-password-1' : 'wrong-one')).status).toBe(i % 2 ? 302 : 401);
      const refused = await unlock('link-password-1');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    },
  );
});
