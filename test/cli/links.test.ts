import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { cliEnvFor, runFerry } from '../helpers/cli.js';
import { createUser } from '../helpers/factories.js';
import { useTestApp } from '../helpers/fixtures.js';

/** `ferry links list|disable|enable|disable-blocked` on the storage a running app uses; visits seen through the app. */
describe.each(engines)('ferry links on %s', { timeout: 180_000 }, (engine) => {
  const t = useTestApp(engine);
  let env: Record<string, string>;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-cli-links-'));
    env = cliEnvFor(t);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * The status visits get once the CLI's change reached the app's redirect cache: at once on PostgreSQL
   * (the outbox, woken by NOTIFY), within about 250 ms on the embedded engine (the outbox, read every 250 ms).
   * Visits are retried until they answer `status`, for at most 10 s.
   */
  const visitsAnswer = async (code: string, status: number): Promise<number> => {
    const until = Date.now() + 10_000;
    for (;;) {
      const got = (await t.request({ url: `/${code}` })).status;
      if (got === status || Date.now() > until) return got;
      await new Promise((resolve) => setTimeout(resolve, 100)); // the next visit, not a wait for time to pass
    }
  };

  const linkOf = async (token: string, url: string) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/links', token, payload: { original_url: url } });
    expect(res.status, res.text).toBe(201);
    return res.body.short_code as string;
  };

  it('when an operator lists and disables a link, then it answers 410 until enabled again, and the list shows why', async () => {
    const owner = await createUser(t);
    const code = await linkOf(owner.token, 'https://phish.example/login');
    expect((await t.request({ url: `/${code}` })).status).toBe(302); // and now in the app's redirect cache
    const listed = await runFerry(['links', 'list', '--user', owner.username, '--json'], env);
    expect(listed.status, listed.stderr).toBe(0);
    expect((listed.json() as Array<{ short_code: string }>).map((l) => l.short_code)).toEqual([code]);

    const disabled = await runFerry(['links', 'disable', code, '--reason', 'phishing'], env);
    expect(disabled.status, disabled.stderr).toBe(0);
    expect(await visitsAnswer(code, 410)).toBe(410);
    const onlyDisabled = await runFerry(['links', 'list', '--status', 'disabled', '--json'], env);
    expect(onlyDisabled.json()).toEqual([
      expect.objectContaining({ short_code: code, disabled: true, disabled_reason: 'phishing' }),
    ]);

    expect((await runFerry(['links', 'enable', code], env)).status).toBe(0);
    expect(await visitsAnswer(code, 302)).toBe(302);
    expect((await runFerry(['links', 'disable', 'nosuchcd'], env)).status).toBe(1);
  });

  it("when links are on a domain, then the list prints each short URL on the link's domain, and --domain keeps to one", async () => {
    const owner = await createUser(t, { status: 'active' });
    const hostname = `cli-${Math.random().toString(36).slice(2, 8)}.example.test`;
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/domains', token: owner.token, payload: { hostname } })).status,
    ).toBe(201);
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/on-domain', domain: hostname },
    });
    expect(made.status, made.text).toBe(201);
    const plain = await linkOf(owner.token, 'https://example.com/plain');
    const listed = await runFerry(['links', 'list', '--user', owner.username], env);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`://${hostname}/${made.body.short_code}`);
    // No PUBLIC_BASE_URL here: the default domain's link by its path (see the next test).
    expect(listed.stdout).toMatch(new RegExp(`^/${plain} `, 'm'));
    const onDomain = await runFerry(['links', 'list', '--domain', hostname, '--json'], env);
    expect(onDomain.json()).toEqual([
      expect.objectContaining({ short_code: made.body.short_code, domain: hostname, short_url: made.body.short_url }),
    ]);
  });

  it('when links are listed, then their short URLs are on PUBLIC_BASE_URL (unset: paths, and a warning saying the base is unknown) and owners are named by username', async () => {
    const owner = await createUser(t, { status: 'active' });
    const code = await linkOf(owner.token, 'https://example.com/named-owner');
    const withBase = await runFerry(['links', 'list', '--user', owner.username], {
      ...env,
      PUBLIC_BASE_URL: 'https://go.example.test',
    });
    expect(withBase.status, withBase.stderr).toBe(0);
    expect(withBase.stdout).toMatch(
      new RegExp(
        `^https://go\\.example\\.test/${code} +- +${owner.username} +0 +active +https://example\\.com/named-owner$`,
        'm',
      ),
    );
    expect(withBase.stderr).toBe('');
    const json = await runFerry(['links', 'list', '--user', owner.username, '--json'], {
      ...env,
      PUBLIC_BASE_URL: 'https://go.example.test',
    });
    expect(json.json()).toEqual([
      expect.objectContaining({
        short_code: code,
        short_url: `https://go.example.test/${code}`,
        user_id: owner.id,
        owner_username: owner.username,
      }),
    ]);

    const withoutBase = await runFerry(['links', 'list', '--user', owner.username], env);
    expect(withoutBase.status, withoutBase.stderr).toBe(0);
    expect(withoutBase.stdout).toMatch(new RegExp(`^/${code} +- +${owner.username} `, 'm'));
    expect(withoutBase.stdout).not.toContain('127.0.0.1');
    expect(withoutBase.stderr).toMatch(/PUBLIC_BASE_URL is not set, so the default domain's address is unknown here/);
    const jsonWithout = await runFerry(['links', 'list', '--user', owner.username, '--json'], env);
    expect(jsonWithout.json()).toEqual([expect.objectContaining({ short_code: code, short_url: null })]);
  });

  it('when a link has aliases, then its row lists them beside its short URL', async () => {
    const owner = await createUser(t, { status: 'active' });
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: owner.token,
      payload: { original_url: 'https://example.com/sale', aliases: ['summer-sale-2024', 'ss24'] },
    });
    expect(made.status, made.text).toBe(201);
    const listed = await runFerry(['links', 'list', '--user', owner.username], {
      ...env,
      PUBLIC_BASE_URL: 'https://go.example.test',
    });
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^SHORT URL +ALIASES +OWNER /m);
    expect(listed.stdout).toMatch(
      new RegExp(
        `^https://go\\.example\\.test/${made.body.short_code} +summer-sale-2024,ss24 +${owner.username} `,
        'm',
      ),
    );
  });

  it('when one code is on the default domain and on a custom one, then disable and enable name the custom one with --domain and the default one without; an unknown domain or code fails (exit 1) saying which', async () => {
    const owner = await createUser(t, { status: 'active' });
    const hostname = `cli-${Math.random().toString(36).slice(2, 8)}.example.test`;
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/domains', token: owner.token, payload: { hostname } })).status,
    ).toBe(201);
    const code = `d${Math.random().toString(36).slice(2, 8)}`;
    for (const domain of [null, hostname]) {
      const made = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: owner.token,
        payload: { original_url: 'https://example.com/twin', short_code: code, domain },
      });
      expect(made.status, made.text).toBe(201);
    }
    const disabledOn = async (domain: string | null): Promise<boolean> => {
      const res = await t.request({
        url: `/api/v1/links/${code}${domain ? `?domain=${domain}` : ''}`,
        token: owner.token,
      });
      expect(res.status, res.text).toBe(200);
      return res.body.disabled as boolean;
    };

    const onDomain = await runFerry(
      ['links', 'disable', code, '--domain', hostname, '--reason', 'spam', '--json'],
      env,
    );
    expect(onDomain.status, onDomain.stderr).toBe(0);
    expect(onDomain.json()).toEqual({ short_code: code, disabled: true, disabled_reason: 'spam' });
    expect([await disabledOn(hostname), await disabledOn(null)]).toEqual([true, false]);
    expect((await t.request({ url: `/${code}` })).status).toBe(302); // the default domain's link still redirects

    const onDefault = await runFerry(['links', 'disable', code], env);
    expect(onDefault.status, onDefault.stderr).toBe(0);
    expect(await visitsAnswer(code, 410)).toBe(410);
    const enabled = await runFerry(['links', 'enable', code, '--domain', hostname.toUpperCase()], env);
    expect(enabled.status, enabled.stderr).toBe(0);
    expect(enabled.stdout).toBe(`${code} on ${hostname.toUpperCase()} redirects again\n`);
    expect([await disabledOn(hostname), await disabledOn(null)]).toEqual([false, true]);

    const unknownDomain = await runFerry(['links', 'disable', code, '--domain', 'nowhere.example.test'], env);
    expect(unknownDomain.status).toBe(1);
    expect(unknownDomain.stderr).toBe('ferry: nowhere.example.test is not a domain of this service\n');
    const unknownCode = await runFerry(['links', 'enable', 'zz9zz9', '--domain', hostname, '--json'], env);
    expect(unknownCode.status).toBe(1);
    expect(JSON.parse(unknownCode.stderr)).toEqual({
      error: { code: 'NOT_FOUND', message: `No link has the code zz9zz9 on ${hostname}`, details: [] },
    });
    const notOnDefault = await runFerry(['links', 'enable', 'zz9zz9'], env);
    expect([notOnDefault.status, notOnDefault.stderr]).toEqual([
      1,
      'ferry: No link has the code zz9zz9 on the default domain\n',
    ]);
    expect([await disabledOn(hostname), await disabledOn(null)]).toEqual([false, true]);
  });

  it('when disable-blocked runs with a blocked hosts file, then links to those hosts and their subdomains are disabled, domain fallbacks to them cleared, and both counted', async () => {
    const owner = await createUser(t);
    const bad = [
      await linkOf(owner.token, 'https://evil-blocked.example/a'),
      await linkOf(owner.token, 'https://www.evil-blocked.example/b'),
    ];
    const good = await linkOf(owner.token, 'https://fine.example/c');
    const hostname = `cli-${Math.random().toString(36).slice(2, 8)}.example.test`;
    const fallbacks = {
      root_redirect: 'https://evil-blocked.example/home',
      not_found_redirect: 'https://fine.example/missing',
      expired_redirect: 'http://[::ffff:198.51.100.9]/gone',
    };
    const domain = await t.request({
      method: 'POST',
      url: '/api/v1/domains',
      token: owner.token,
      payload: { hostname, ...fallbacks },
    });
    expect(domain.status, domain.text).toBe(201);
    const file = path.join(dir, 'blocked.txt');
    writeFileSync(file, '# phishing\nevil-blocked.example\n198.51.100.9\n');
    const run = await runFerry(['links', 'disable-blocked', '--json'], { ...env, BLOCKED_HOSTS_FILE: file });
    expect(run.status, run.stderr).toBe(0);
    expect(run.json()).toEqual({ disabled: 2, fallbacks_cleared: 2, link_fallbacks_cleared: 0 });
    for (const code of bad) expect(await visitsAnswer(code, 410)).toBe(410);
    expect((await t.request({ url: `/${good}` })).status).toBe(302);
    const after = await t.request({ url: `/api/v1/domains/${domain.body.id}`, token: owner.token });
    expect(after.body).toMatchObject({
      root_redirect: null,
      not_found_redirect: 'https://fine.example/missing',
      expired_redirect: null,
    });
    const again = await runFerry(['links', 'disable-blocked'], { ...env, BLOCKED_HOSTS_FILE: file });
    expect([again.status, again.stdout]).toEqual([
      0,
      'disabled 0 links to blocked hosts\ncleared 0 domain fallbacks to blocked hosts\ncleared 0 link fallbacks (fallback_url) to blocked hosts\n',
    ]);
    expect((await runFerry(['links', 'disable-blocked'], env)).status).toBe(2); // no BLOCKED_HOSTS_FILE
  });

  it("when disable-blocked runs and a link's fallback_url is on a blocked host, then it is cleared (the link disabled only when its destination is blocked too), counted, and a running server's visits of the broken link follow", async () => {
    const owner = await createUser(t);
    const link = async (original_url: string, fallback_url: string) => {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/links',
        token: owner.token,
        payload: { original_url, fallback_url },
      });
      expect(res.status, res.text).toBe(201);
      return res.body as { id: number; short_code: string };
    };
    const fallbackBlocked = await link('https://fine.example/page', 'https://sorry.fallback-blocked.example/x');
    const bothBlocked = await link('https://fallback-blocked.example/a', 'https://fallback-blocked.example/b');
    const neither = await link('https://fine.example/other', 'https://fine.example/sorry');
    // broken (as two failed checks leave it) before its first visit, which caches it: visits go to the fallback
    await t.storage.db
      .updateTable('links')
      .set({ health_status: 'broken', health_failures: 2 })
      .where('id', '=', fallbackBlocked.id)
      .execute();
    expect((await t.request({ url: `/${fallbackBlocked.short_code}` })).headers.location).toBe(
      'https://sorry.fallback-blocked.example/x',
    );

    const file = path.join(dir, 'blocked-fallbacks.txt');
    writeFileSync(file, 'fallback-blocked.example\n');
    const run = await runFerry(['links', 'disable-blocked', '--json'], { ...env, BLOCKED_HOSTS_FILE: file });
    expect(run.status, run.stderr).toBe(0);
    expect(run.json()).toEqual({ disabled: 1, fallbacks_cleared: 0, link_fallbacks_cleared: 2 });
    const read = async (code: string) =>
      (await t.request({ url: `/api/v1/links/${code}`, token: owner.token })).body as {
        fallback_url: string | null;
        disabled: boolean;
      };
    expect(await read(fallbackBlocked.short_code)).toMatchObject({ fallback_url: null, disabled: false });
    expect(await read(bothBlocked.short_code)).toMatchObject({ fallback_url: null, disabled: true });
    expect(await read(neither.short_code)).toMatchObject({
      fallback_url: 'https://fine.example/sorry',
      disabled: false,
    });
    // the running app's cache heard of it: the broken link's visits go to its destination now
    const until = Date.now() + 10_000;
    let location: unknown;
    do {
      location = (await t.request({ url: `/${fallbackBlocked.short_code}` })).headers.location;
      if (location !== 'https://fine.example/page') await new Promise((resolve) => setTimeout(resolve, 100));
    } while (location !== 'https://fine.example/page' && Date.now() < until);
    expect(location).toBe('https://fine.example/page');

    const again = await runFerry(['links', 'disable-blocked', '--json'], { ...env, BLOCKED_HOSTS_FILE: file });
    expect(again.json()).toEqual({ disabled: 0, fallbacks_cleared: 0, link_fallbacks_cleared: 0 });
  });
});
