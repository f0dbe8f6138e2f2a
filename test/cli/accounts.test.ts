import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';
import { cliEnvFor, runFerry, runFerryProcess } from '../helpers/cli.js';
import { createUser, login, uniqueName } from '../helpers/factories.js';

/**
 * `ferry admin|users|keys` as an operator runs them (in this process; the first-run hint as a real one) on the
 * storage a running app uses, and their effect seen through the app's HTTP API (every response checked against
 * the OpenAPI document).
 */
describe.each(engines)('ferry accounts and keys on %s', { timeout: 180_000 }, (engine) => {
  let env: Record<string, string>;
  const t = useTestApp(engine);
  beforeAll(async () => {
    env = cliEnvFor(t);
  });

  /** The app's clock follows the wall clock the CLI's changes are stamped with (token revocation). */
  const catchUp = () => {
    t.clock.ms = Date.now() + 1000;
  };

  it('when an admin is created, then it signs in through the API and sees every account; a taken name fails with exit 1', async () => {
    const username = uniqueName('adm');
    const made = await runFerry(['admin', 'create', username, '--json'], env, { stdin: 'first-admin-password\n' });
    expect(made.status, made.stderr).toBe(0);
    expect(made.json()).toMatchObject({ username, role: 'admin', status: 'active' });
    catchUp();
    const token = await login(t, username, 'first-admin-password');
    expect((await t.request({ url: '/api/v1/users', token })).status).toBe(200);

    const again = await runFerry(['admin', 'create', username], env, { stdin: 'first-admin-password\n' });
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/already/);
    expect(again.stdout).toBe('');
  });

  it('when a pending sign-up is activated and later suspended, then it can order, and then its token stops working', async () => {
    const user = await createUser(t, { status: 'pending' });
    const listed = await runFerry(['users', 'list', '--status', 'pending', '--json'], env);
    expect(listed.status, listed.stderr).toBe(0);
    expect((listed.json() as Array<{ username: string }>).map((u) => u.username)).toContain(user.username);

    const activated = await runFerry(['users', 'activate', user.username], env);
    expect(activated.status, activated.stderr).toBe(0);
    expect(activated.stdout).toMatch(/is active/);
    catchUp();
    const token = await login(t, user.username, user.password);
    const order = await t.request({
      method: 'POST',
      url: '/api/v1/orders',
      token,
      headers: { 'idempotency-key': uniqueName('k') },
      payload: { itemId: 1, quantity: 1 },
    });
    expect(order.status, order.text).toBe(201);

    const suspended = await runFerry(['users', 'suspend', String(user.id), '--json'], env);
    expect(suspended.status, suspended.stderr).toBe(0);
    expect(suspended.json()).toMatchObject({ id: user.id, status: 'suspended' });
    expect((await t.request({ url: '/api/v1/users/me', token })).status).toBe(401);
  });

  it('when a forgotten password is reset, then the new one signs in and tokens issued before it are refused', async () => {
    const admin = await createUser(t, { role: 'admin', status: 'active' });
    const reset = await runFerry(['users', 'set-password', admin.username], env, { stdin: 'a-brand-new-password\n' });
    expect(reset.status, reset.stderr).toBe(0);
    expect((await t.request({ url: '/api/v1/users/me', token: admin.token })).status).toBe(401);
    catchUp();
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/tokens',
          payload: { username: admin.username, password: admin.password },
        })
      ).status,
    ).toBe(401);
    const token = await login(t, admin.username, 'a-brand-new-password');
    expect((await t.request({ url: '/api/v1/users/me', token })).status).toBe(200);
  });

  it('when an API key is created, then it authenticates; when revoked, then it is refused', async () => {
    const user = await createUser(t, { status: 'active' });
    const created = await runFerry(
      ['keys', 'create', user.username, '--name', 'deploy', '--scope', 'links:read,links:write', '--json'],
      env,
    );
    expect(created.status, created.stderr).toBe(0);
    const { key, id } = created.json() as { key: string; id: number };
    const link = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: key,
      payload: { original_url: 'https://example.com/cli-key' },
    });
    expect(link.status, link.text).toBe(201);
    expect((await t.request({ url: `/api/v1/users/${user.id}/links`, token: key })).status).toBe(200);

    const listed = await runFerry(['keys', 'list', user.username], env);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+deploy\\s+fry_`, 'm'));
    const revoked = await runFerry(['keys', 'revoke', user.username, String(id)], env);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect((await t.request({ url: `/api/v1/users/${user.id}/links`, token: key })).status).toBe(401);
  });

  it("when the input breaks the API's rules, then nothing changes and the exit status is 2 (bad usage), 1 for an unknown account", async () => {
    const short = await runFerry(['admin', 'create', uniqueName('s'), '--json'], env, { stdin: 'short\n' });
    expect(short.status).toBe(2);
    expect(JSON.parse(short.stderr)).toMatchObject({ error: { code: 'USAGE', details: [{ field: 'password' }] } });
    const scope = await runFerry(['keys', 'create', '1', '--name', 'x', '--scope', 'everything'], env);
    expect(scope.status).toBe(2);
    expect(scope.stderr).toMatch(/scopes/);
    const nobody = await runFerry(['users', 'suspend', 'no-such-account'], env);
    expect(nobody.status).toBe(1);
    expect(nobody.stderr).toMatch(/no account/);
  });

  it('when the first-run hint is run as printed in a checkout (its <username> filled in), then that admin exists and the hint is gone', async () => {
    const fresh = await createTestApp(engine);
    try {
      const hint = (await fresh.request({ url: '/api/v1/instance' })).body.first_admin_command as string;
      // `npx ferry` in a checkout runs package.json's bin, which runs the compiled tool runFerryProcess starts:
      // the command as printed, in a process of its own, end to end.
      const [npx, tool, ...args] = hint.split(' ');
      expect([npx, tool]).toEqual(['npx', 'ferry']);
      expect((JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string> }).bin.ferry).toBe(
        'bin/ferry.mjs',
      );
      const username = uniqueName('first');
      const made = await runFerryProcess(
        args.map((a) => (a === '<username>' ? username : a)),
        cliEnvFor(fresh),
        { stdin: 'first-admin-password\n' },
      );
      expect(made.status, made.stderr).toBe(0);
      await login(fresh, username, 'first-admin-password');
      expect((await fresh.request({ url: '/api/v1/instance' })).body.first_admin_command).toBeNull();
    } finally {
      await fresh.close();
    }
  });
});
