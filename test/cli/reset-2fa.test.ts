import { beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { cliEnvFor, runFerry } from '../helpers/cli.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { createUser } from '../helpers/factories.js';
import { codeAt, enableTotp, signIn } from '../modules/two-factor/two-factor.helpers.js';

/** SPEC §23: `ferry users reset-2fa USERNAME`, and what the CLI's changes leave in the audit log. */
describe.each(engines)('ferry users reset-2fa on %s', { timeout: 180_000 }, (engine) => {
  let env: Record<string, string>;
  const t = useTestApp(engine);
  beforeAll(async () => {
    env = cliEnvFor(t);
  });

  it('when an account locked out of its second factor is reset, then it signs in with its password alone, and the log says cli did it', async () => {
    const u = await createUser(t, { role: 'admin' });
    await enableTotp(t, u);
    expectEnvelope(await signIn(t, u), 401, 'TOTP_REQUIRED');
    const reset = await runFerry(['users', 'reset-2fa', u.username, '--json'], env);
    expect(reset.status, reset.stderr).toBe(0);
    expect(reset.json()).toMatchObject({ id: u.id, two_factor: 'off', was_on: true });
    expect((await signIn(t, u)).status).toBe(201);
    const entry = await t.storage.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'auth.totp_disabled')
      .where('target_id', '=', String(u.id))
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ actor: 'cli', actor_id: null, ip: null });

    const again = await runFerry(['users', 'reset-2fa', String(u.id)], env);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/had no two-factor/);
  });

  it('when the account does not exist, then exit 1 and nothing on stdout', async () => {
    const res = await runFerry(['users', 'reset-2fa', 'no-such-user-here'], env);
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/no account/);
    expect(res.stdout).toBe('');
  });

  it('when the CLI suspends an account, then the status change is in the audit log as cli', async () => {
    const u = await createUser(t);
    const suspended = await runFerry(['users', 'suspend', u.username], env);
    expect(suspended.status, suspended.stderr).toBe(0);
    const admin = await createUser(t, { role: 'admin' });
    const log = await t.request({
      url: `/api/v1/audit-log?action=user.status_changed&limit=100`,
      token: admin.token,
    });
    expect(log.status).toBe(200);
    expect(log.body.data).toContainEqual(
      expect.objectContaining({
        actor: 'cli',
        actor_id: null,
        target_type: 'user',
        target_id: String(u.id),
        details: { from: 'active', to: 'suspended' },
      }),
    );
  });

  it('when a code is replayed after the reset and a new set-up, then the new secret is what counts', async () => {
    const u = await createUser(t);
    const first = await enableTotp(t, u);
    expect((await runFerry(['users', 'reset-2fa', u.username], env)).status).toBe(0);
    const second = await enableTotp(t, u);
    expect(second.secret).not.toBe(first.secret);
    expect((await signIn(t, u, codeAt(second.secret, t.clock.now()))).status).toBe(201);
  });
});
