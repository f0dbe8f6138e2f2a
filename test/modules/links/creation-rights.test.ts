import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, linkCount } from '../../helpers/factories.js';
import { createApiKey } from '../api-keys/api-keys.helpers.js';
import { postOrder } from '../orders/orders.helpers.js';

/** SPEC §18: a pending account signs in and reads but creates nothing; ANONYMOUS_LINKS=false needs a credential. */
describe.each(engines)('who may create on %s', (engine) => {
  describe('a pending account', () => {
    const t = useTestApp(engine);

    it('when it creates a link, links in bulk (v1 and v2), an API key or an order, then 422 ACCOUNT_NOT_ACTIVE and nothing is stored', async () => {
      const u = await createUser(t, { status: 'pending' });
      const before = await linkCount(t);
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: '/api/v1/links',
          token: u.token,
          payload: { original_url: 'https://example.com/p' },
        }),
        422,
        'ACCOUNT_NOT_ACTIVE',
      );
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: '/api/v2/links',
          token: u.token,
          payload: { originalUrl: 'https://example.com/p' },
        }),
        422,
        'ACCOUNT_NOT_ACTIVE',
      );
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: '/api/v1/links/bulk',
          token: u.token,
          payload: { links: [{ original_url: 'https://example.com/b' }] },
        }),
        422,
        'ACCOUNT_NOT_ACTIVE',
      );
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: '/api/v2/links/bulk',
          token: u.token,
          payload: { links: [{ originalUrl: 'https://example.com/b' }] },
        }),
        422,
        'ACCOUNT_NOT_ACTIVE',
      );
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: `/api/v1/users/${u.id}/api-keys`,
          token: u.token,
          payload: { name: 'k', scopes: ['links:read'] },
        }),
        422,
        'ACCOUNT_NOT_ACTIVE',
      );
      expectEnvelope(await postOrder(t, u, { itemId: 1, quantity: 1 }), 422, 'ACCOUNT_NOT_ACTIVE');
      expect(await linkCount(t)).toBe(before);
    });

    it('when an admin creates an API key for it, then 422 too: a pending account holds no keys', async () => {
      const admin = await createUser(t, { role: 'admin' });
      const u = await createUser(t, { status: 'pending' });
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: `/api/v1/users/${u.id}/api-keys`,
          token: admin.token,
          payload: { name: 'k', scopes: ['links:read'] },
        }),
        422,
        'ACCOUNT_NOT_ACTIVE',
      );
    });

    it('when it signs in and reads its own record and links, then 200', async () => {
      const u = await createUser(t, { status: 'pending' });
      expect((await t.request({ url: '/api/v1/users/me', token: u.token })).body.status).toBe('pending');
      expect((await t.request({ url: '/api/v1/users/me/links', token: u.token })).status).toBe(200);
      expect((await t.request({ url: '/api/v1/users/me/orders', token: u.token })).status).toBe(200);
    });

    it('when an admin activates it, then the same token creates links', async () => {
      const admin = await createUser(t, { role: 'admin' });
      const u = await createUser(t, { status: 'pending' });
      expect(
        (
          await t.request({
            method: 'PATCH',
            url: `/api/v1/users/${u.id}`,
            token: admin.token,
            payload: { status: 'active' },
          })
        ).status,
      ).toBe(200);
      // The status change revoked the earlier tokens (SPEC §12): sign in again.
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/tokens',
        payload: { username: u.username, password: u.password },
      });
      const created = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: res.body.accessToken,
        payload: { original_url: 'https://example.com/now' },
      });
      expect(created.status).toBe(201);
    });

    it("when an active user's key is used after the user went back to pending, then the key creates no link", async () => {
      const u = await createUser(t);
      const { key } = await createApiKey(t, u, ['links:write']);
      await t.storage.db.updateTable('users').set({ status: 'pending' }).where('id', '=', u.id).execute();
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: '/api/v1/links',
          token: key,
          payload: { original_url: 'https://example.com/k' },
        }),
        422,
        'ACCOUNT_NOT_ACTIVE',
      );
    });
  });

  describe('ANONYMOUS_LINKS=false', () => {
    const t = useTestApp(engine, { env: { ANONYMOUS_LINKS: 'false' } });

    it('when a link is created without a credential, single or bulk, v1 or v2, then 401 with a Bearer challenge and nothing is stored', async () => {
      const before = await linkCount(t);
      for (const [url, payload] of [
        ['/api/v1/links', { original_url: 'https://example.com/anon' }],
        ['/api/v2/links', { originalUrl: 'https://example.com/anon' }],
        ['/api/v1/links/bulk', { links: [{ original_url: 'https://example.com/anon' }] }],
        ['/api/v2/links/bulk', { links: [{ originalUrl: 'https://example.com/anon' }] }],
      ] as const) {
        const res = await t.request({ method: 'POST', url, payload });
        expectEnvelope(res, 401, 'UNAUTHENTICATED');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      expect(await linkCount(t)).toBe(before);
      expect((await t.request({ url: '/api/v1/instance' })).body.anonymous_links).toBe(false);
    });

    it('when an active user creates a link, then 201 as usual', async () => {
      const u = await createUser(t);
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/links',
            token: u.token,
            payload: { original_url: 'https://example.com/mine' },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/links/bulk',
            token: u.token,
            payload: { links: [{ original_url: 'https://example.com/mine2' }] },
          })
        ).body.data[0].status,
      ).toBe(201);
    });
  });

  describe('ANONYMOUS_LINKS unset', () => {
    const t = useTestApp(engine);

    it('when a link is created without a credential, then 201 (the default allows it)', async () => {
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/links',
            payload: { original_url: 'https://example.com/anon' },
          })
        ).status,
      ).toBe(201);
      expect((await t.request({ url: '/api/v1/instance' })).body.anonymous_links).toBe(true);
    });
  });
});
