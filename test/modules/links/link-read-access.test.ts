import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { createApiKey } from '../api-keys/api-keys.helpers.js';
import { createLink, LINKS } from './links.helpers.js';

/** SPEC §17, "Who may read a link", and what an anonymous link may not have. */
describe.each(engines)('who may read a link on %s', (engine) => {
  const t = useTestApp(engine);
  const owner = useUser(t, { status: 'active' });
  const other = useUser(t, { status: 'active' });
  const admin = useUser(t, { role: 'admin', status: 'active' });

  const read = (code: string, token?: string, version = 1) =>
    t.request({ url: `/api/v${version}/links/${code}`, ...(token ? { token } : {}) });
  const qr = (code: string, token?: string) => t.request({ url: `${LINKS}/${code}/qr`, ...(token ? { token } : {}) });

  it('when an anonymous link is read, then anyone may: no token, any user, an admin', async () => {
    const link = await createLink(t, { original_url: 'https://example.com/public' });
    for (const token of [undefined, other.token, admin.token]) {
      const res = await read(link.short_code, token);
      expect(res.status).toBe(200);
      expect(res.body.original_url).toBe('https://example.com/public');
      expect((await qr(link.short_code, token)).status).toBe(200);
    }
  });

  it("when an owned link is read, then its owner, an admin and the owner's key with links:read may; anyone else gets 403 and no target", async () => {
    const link = await createLink(t, { original_url: 'https://example.com/private-target' }, owner.token);
    const readKey = await createApiKey(t, owner, ['links:read']);
    const writeKey = await createApiKey(t, owner, ['links:write']);
    const othersKey = await createApiKey(t, other, ['links:read']);
    for (const token of [owner.token, admin.token, readKey.key]) {
      expect((await read(link.short_code, token)).body.original_url).toBe('https://example.com/private-target');
      expect((await read(link.short_code, token, 2)).body.originalUrl).toBe('https://example.com/private-target');
      expect((await qr(link.short_code, token)).status).toBe(200);
    }
    for (const token of [undefined, other.token, othersKey.key]) {
      for (const res of [
        await read(link.short_code, token),
        await read(link.short_code, token, 2),
        await qr(link.short_code, token),
      ]) {
        expectEnvelope(res, 403, 'FORBIDDEN');
        expect(res.text).not.toContain('private-target');
      }
    }
    expectEnvelope(await read(link.short_code, writeKey.key), 403, 'INSUFFICIENT_SCOPE');
  });

  it('when an anonymous link is created with a password or a visit limit, then 400 naming each field, in single, bulk and v2 creation', async () => {
    const single = await t.request({
      method: 'POST',
      url: LINKS,
      payload: { original_url: 'https://example.com/a', password: 'secret-password-1', max_visits: 3 },
    });
    expect(expectEnvelope(single, 400, 'VALIDATION_ERROR')).toEqual(['max_visits', 'password']);
    const v2 = await t.request({
      method: 'POST',
      url: '/api/v2/links',
      payload: { originalUrl: 'https://example.com/a', maxVisits: 3 },
    });
    expect(expectEnvelope(v2, 400, 'VALIDATION_ERROR')).toEqual(['maxVisits']);
    const bulk = await t.request({
      method: 'POST',
      url: `${LINKS}/bulk`,
      payload: {
        links: [
          { original_url: 'https://example.com/b', password: 'secret-password-1' },
          { original_url: 'https://example.com/c' },
        ],
      },
    });
    expect(bulk.body.data.map((d: { status: number }) => d.status)).toEqual([400, 201]);
    expect(bulk.body.data[0].error.details.map((d: { field: string }) => d.field)).toEqual(['password']);
  });

  it('when an admin patches a password or a visit limit onto an anonymous link, then 400; removing them is fine', async () => {
    const link = await createLink(t);
    const res = await t.request({
      method: 'PATCH',
      url: `${LINKS}/${link.short_code}`,
      token: admin.token,
      payload: { password: 'secret-password-1', max_visits: 2 },
    });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['max_visits', 'password']);
    const cleared = await t.request({
      method: 'PATCH',
      url: `${LINKS}/${link.short_code}`,
      token: admin.token,
      payload: { password: null, max_visits: null },
    });
    expect(cleared.status).toBe(200);
  });

  it('when the owner of a password or max_visits link is deleted, then the link shows its target to admins only', async () => {
    const gone = await createUser(t, { status: 'active' });
    const guarded = await createLink(
      t,
      { original_url: 'https://example.com/guarded', password: 'secret-password-1' },
      gone.token,
    );
    const limited = await createLink(t, { original_url: 'https://example.com/limited', max_visits: 5 }, gone.token);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${gone.id}`, token: admin.token })).status).toBe(
      204,
    );
    for (const link of [guarded, limited]) {
      for (const token of [undefined, other.token]) {
        const res = await read(link.short_code, token);
        expectEnvelope(res, 403, 'FORBIDDEN');
        expect(res.text).not.toMatch(/guarded|limited/);
      }
      const byAdmin = await read(link.short_code, admin.token);
      expect(byAdmin.status).toBe(200);
      expect(byAdmin.body.user_id).toBeNull();
    }
  });
});
