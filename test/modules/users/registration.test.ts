import { describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { login, uniqueName } from '../../helpers/factories.js';

/** SPEC §18: REGISTRATION decides what a sign-up (POST /users without an admin's token) gets. */
const signUp = (t: TestApp, extra: Record<string, unknown> = {}, token?: string) => {
  const username = uniqueName('r');
  return t.request({
    method: 'POST',
    url: '/api/v1/users',
    payload: { username, email: `${username}@example.com`, password: 'correct-horse-battery', ...extra },
    ...(token ? { token } : {}),
  });
};

describe.each(engines)('REGISTRATION on %s', (engine) => {
  describe('approval (the default)', () => {
    const t = useTestApp(engine);

    it('when someone signs up, then the account is pending and the instance says sign-up needs approval', async () => {
      const res = await signUp(t);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ role: 'user', status: 'pending' });
      expect((await t.request({ url: '/api/v1/instance' })).body.registration).toBe('approval');
    });

    it('when a sign-up asks to be active or admin, then 403 and nothing is created', async () => {
      expect(expectEnvelope(await signUp(t, { status: 'active' }), 403, 'FORBIDDEN')).toEqual(['status']);
      expect(expectEnvelope(await signUp(t, { role: 'admin' }), 403, 'FORBIDDEN')).toEqual(['role']);
    });

    it('when no admin exists yet, then the first account signed up is still an ordinary pending user: admins come from the CLI or ADMIN_USERNAME', async () => {
      const fresh = await createTestApp(engine);
      try {
        expect((await fresh.request({ url: '/api/v1/instance' })).body.first_admin_command).toBe(
          'npx ferry admin create <username>',
        );
        expectEnvelope(await signUp(fresh, { role: 'admin', status: 'active' }), 403, 'FORBIDDEN');
        const first = await signUp(fresh);
        expect(first.body).toMatchObject({ role: 'user', status: 'pending' });
        const token = await login(fresh, first.body.username, 'correct-horse-battery');
        expectEnvelope(
          await fresh.request({
            method: 'PATCH',
            url: `/api/v1/users/${first.body.id}`,
            token,
            payload: { role: 'admin' },
          }),
          403,
          'FORBIDDEN',
        );
        expect((await fresh.request({ url: '/api/v1/instance' })).body.first_admin_command).toBe(
          'npx ferry admin create <username>',
        );
      } finally {
        await fresh.close();
      }
    });
  });

  describe('open', () => {
    const t = useTestApp(engine, { env: { REGISTRATION: 'open' } });

    it('when someone signs up, then the account is active at once and may create links', async () => {
      const res = await signUp(t);
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('active');
      const token = await login(t, res.body.username, 'correct-horse-battery');
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/links',
            token,
            payload: { original_url: 'https://example.com/open' },
          })
        ).status,
      ).toBe(201);
      expect((await t.request({ url: '/api/v2/instance' })).body).toMatchObject({ registration: 'open' });
    });

    it('when a sign-up asks to be admin, then 403 still', async () => {
      expect(expectEnvelope(await signUp(t, { role: 'admin' }), 403, 'FORBIDDEN')).toEqual(['role']);
    });
  });

  describe('closed', () => {
    const t = useTestApp(engine, {
      env: { REGISTRATION: 'closed', ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'root-password-1' },
    });

    it('when someone without an admin token signs up, then 403 REGISTRATION_CLOSED and no account exists', async () => {
      const before = await t.storage.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expectEnvelope(await signUp(t), 403, 'REGISTRATION_CLOSED');
      const after = await t.storage.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
      expect((await t.request({ url: '/api/v1/instance' })).body).toEqual({
        registration: 'closed',
        anonymous_links: true,
        first_admin_command: null,
        oidc_display_name: null,
        apple_app_site_association: null,
        android_asset_links: null,
      });
    });

    it('when an admin creates an account without a status, then it is active; with "status": "pending", pending', async () => {
      const admin = await login(t, 'root', 'root-password-1');
      const made = await signUp(t, {}, admin);
      expect(made.status, made.text).toBe(201);
      expect(made.body.status).toBe('active');
      await login(t, made.body.username, 'correct-horse-battery');
      const waiting = await signUp(t, { status: 'pending' }, admin);
      expect(waiting.body.status).toBe('pending');
    });

    it("when a signed-in non-admin creates an account, then 403 REGISTRATION_CLOSED; an admin's creation is 201", async () => {
      const admin = await login(t, 'root', 'root-password-1');
      const made = await signUp(t, { status: 'active' }, admin);
      expect(made.status).toBe(201);
      expect(made.body.status).toBe('active');
      const user = await login(t, made.body.username, 'correct-horse-battery');
      expectEnvelope(await signUp(t, {}, user), 403, 'REGISTRATION_CLOSED');
    });
  });

  it('when REGISTRATION has another value, then start-up names the variable and the allowed values', async () => {
    await expect(createTestApp(engine, { env: { REGISTRATION: 'invite' } })).rejects.toThrow(
      /REGISTRATION="invite": must be one of approval, open, closed/,
    );
  });
});
