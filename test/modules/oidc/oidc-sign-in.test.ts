import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestApp } from '../../helpers/app.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser } from '../../helpers/factories.js';
import { decodeJwt } from '../../helpers/jwt.js';
import {
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  loginCodeOf,
  startFerry,
  startRealProvider,
  untilCallback,
  type ProviderAccount,
  type RealProvider,
} from './oidc.helpers.js';

const sub = () => `sub-${randomBytes(6).toString('hex')}`;

/** SPEC §23: single sign-on against a real OpenID provider (oidc-provider) on loopback, end to end. */
describe.each(engines)('single sign-on on %s', (engine) => {
  let t: TestApp;
  let origin: string;
  let provider: RealProvider;

  beforeAll(async () => {
    // The provider needs Ferry's callback, Ferry the provider's issuer: Ferry's port is chosen first.
    const started = await startFerry(
      engine,
      (o) => {
        origin = o;
        return {
          OIDC_ISSUER: provider.issuer,
          OIDC_CLIENT_ID: CLIENT_ID,
          OIDC_CLIENT_SECRET: CLIENT_SECRET,
          OIDC_SCOPES: 'openid profile email groups',
          OIDC_ADMIN_GROUPS: 'ferry-admins, ops',
          OIDC_DISPLAY_NAME: 'Acme SSO',
        };
      },
      async (o) => {
        provider = await startRealProvider(`${o}/auth/oidc/callback`);
      },
    );
    t = started.t;
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  /** Signs in at the provider as `account` and follows Ferry's callback: its answer. */
  async function signIn(account: ProviderAccount, browser = new Browser()) {
    provider.signInAs(account);
    const callback = await untilCallback(browser, origin);
    return browser.get(callback);
  }

  const exchange = (code: string) =>
    t.request({ method: 'POST', url: '/api/v1/tokens', payload: { login_code: code } });

  /** Signs in and exchanges the login code: the token's claims and the account. */
  async function signInForToken(account: ProviderAccount) {
    const res = await signIn(account);
    const code = loginCodeOf(res.location);
    expect(code, `${res.status} ${res.text}`).not.toBeNull();
    const issued = await exchange(code!);
    expect(issued.status, issued.text).toBe(201);
    const claims = decodeJwt(issued.body.accessToken).payload as { user_id: number; role: string };
    const me = await t.request({ url: '/api/v1/users/me', token: issued.body.accessToken });
    return { token: issued.body.accessToken as string, claims, me: me.body };
  }

  it('when single sign-on is set up, then GET /instance names it for the sign-in button', async () => {
    const res = await t.request({ url: '/api/v1/instance' });
    expect(res.body.oidc_display_name).toBe('Acme SSO');
    const v2 = await t.request({ url: '/api/v2/instance' });
    expect(v2.body.oidcDisplayName).toBe('Acme SSO');
  });

  it('when the sign-in starts, then the provider is asked for a code with PKCE S256, state and nonce, and the state cookie is HttpOnly and SameSite=Lax', async () => {
    const res = await new Browser().get(`${origin}/auth/oidc/login`);
    expect(res.status).toBe(302);
    const to = new URL(res.location!);
    expect(to.origin).toBe(provider.issuer);
    expect(to.searchParams.get('response_type')).toBe('code');
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    expect(to.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(to.searchParams.get('state')).toBeTruthy();
    expect(to.searchParams.get('nonce')).toBeTruthy();
    expect(to.searchParams.get('redirect_uri')).toBe(`${origin}/auth/oidc/callback`);
    const cookie = res.headers.getSetCookie().join('\n');
    expect(cookie).toMatch(/^ferry_oidc=[^;]+; Path=\/auth\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('when someone signs in for the first time, then an active account is made; the second time, the same account is found by (issuer, sub)', async () => {
    const id = sub();
    const name = `sso_${randomBytes(3).toString('hex')}`;
    const first = await signInForToken({
      sub: id,
      preferred_username: name,
      email: `${name}@corp.example`,
      name: 'Ada L',
    });
    expect(first.me).toMatchObject({
      username: name,
      email: `${name}@corp.example`,
      status: 'active',
      role: 'user',
      name: 'Ada L',
    });
    // The provider renamed the person: still the same account, found by the subject, never by name.
    const second = await signInForToken({ sub: id, preferred_username: `${name}_renamed` });
    expect(second.claims.user_id).toBe(first.claims.user_id);
    expect(second.me.username).toBe(name);
    // SPEC §23: each sign-in is in the audit log, by which method.
    const entries = await t.storage.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('actor_id', '=', first.claims.user_id)
      .execute();
    expect(entries.map((e) => [e.action, JSON.parse(e.details ?? '{}').method])).toEqual([
      ['auth.sign_in', 'oidc'],
      ['auth.sign_in', 'oidc'],
    ]);
  });

  it('when the username and e-mail are taken by a local account, then a new account with a numbered name is made, never linked to it', async () => {
    const local = await createUser(t);
    const signedIn = await signInForToken({ sub: sub(), preferred_username: local.username, email: local.email });
    expect(signedIn.claims.user_id).not.toBe(local.id);
    expect(signedIn.me.username).toBe(`${local.username.slice(0, 31)}2`);
    expect(signedIn.me.email).not.toBe(local.email);
    expect(signedIn.me.email).toMatch(/@sso\.invalid$/);
    const again = await signInForToken({ sub: sub(), preferred_username: local.username });
    expect(again.me.username).toBe(`${local.username.slice(0, 31)}3`);
  });

  it('when the login code is used twice, or after 60 s, then 401 INVALID_CREDENTIALS', async () => {
    const res = await signIn({ sub: sub(), preferred_username: 'twice' });
    const code = loginCodeOf(res.location)!;
    const [a, b] = await Promise.all([exchange(code), exchange(code)]);
    expect([a.status, b.status].sort()).toEqual([201, 401]);
    expectEnvelope(
      [a, b].find((r) => r.status === 401)!,
      401,
      'INVALID_CREDENTIALS',
    );
    expectEnvelope(await exchange(code), 401, 'INVALID_CREDENTIALS');

    const late = loginCodeOf((await signIn({ sub: sub(), preferred_username: 'late' })).location)!;
    t.clock.advance(61_000);
    expectEnvelope(await exchange(late), 401, 'INVALID_CREDENTIALS');
    expectEnvelope(await exchange('never-issued-code'), 401, 'INVALID_CREDENTIALS');
  });

  it('when the body mixes a login code with a password, then 400 naming the field that does not belong', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/tokens',
      payload: { login_code: 'abc', password: 'x' },
    });
    expect(expectEnvelope(res, 400, 'VALIDATION_ERROR')).toEqual(['password']);
  });

  it('when the groups claim names an admin group, then the account is an admin; outside them again, a user whose earlier tokens stop working', async () => {
    await createUser(t, { role: 'admin' }); // not the last admin: demotion is allowed
    const id = sub();
    const admin = await signInForToken({ sub: id, preferred_username: 'grouped', groups: ['staff', 'ops'] });
    expect(admin.claims.role).toBe('admin');
    expect(admin.me.role).toBe('admin');
    expect((await t.request({ url: '/api/v1/users', token: admin.token })).status).toBe(200);

    const demoted = await signInForToken({ sub: id, groups: ['staff'] });
    expect(demoted.claims.user_id).toBe(admin.claims.user_id);
    expect(demoted.claims.role).toBe('user');
    expectEnvelope(await t.request({ url: '/api/v1/users', token: admin.token }), 401, 'UNAUTHENTICATED');
    expectEnvelope(await t.request({ url: '/api/v1/users', token: demoted.token }), 403, 'FORBIDDEN');
  });

  it('when the state is wrong or its cookie is missing, then a 400 page says so and no account is made', async () => {
    provider.signInAs({ sub: sub(), preferred_username: 'nostate' });
    const browser = new Browser();
    const callback = new URL(await untilCallback(browser, origin));
    const wrong = new URL(callback);
    wrong.searchParams.set('state', 'not-the-state');
    const res = await browser.get(wrong.href);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('state');

    // The cookie was spent by that answer: the right state alone is not enough either.
    const cookieless = await new Browser().get(callback.href);
    expect(cookieless.status).toBe(400);
    expect(cookieless.text).toContain('no sign-in in progress');
  });

  it('when an authorization code is replayed, then the provider refuses it and a 400 page says so', async () => {
    provider.signInAs({ sub: sub(), preferred_username: 'replayer' });
    const browser = new Browser();
    const callback = await untilCallback(browser, origin);
    const stateCookie = browser.cookie(origin, 'ferry_oidc')!;
    const first = await browser.get(callback);
    expect(loginCodeOf(first.location)).not.toBeNull();
    browser.setCookie(origin, 'ferry_oidc', stateCookie); // an attacker holding the whole browser state
    const replay = await browser.get(callback);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('invalid_grant');
  });

  it('when the provider answers with an error, then a 4xx page repeats it', async () => {
    const browser = new Browser();
    const start = await browser.get(`${origin}/auth/oidc/login`);
    const state = new URL(start.location!).searchParams.get('state')!;
    const res = await browser.get(
      `${origin}/auth/oidc/callback?error=access_denied&error_description=${encodeURIComponent('<b>User said no</b>')}&state=${state}&iss=${encodeURIComponent(provider.issuer)}`,
    );
    expect(res.status).toBe(403);
    expect(res.text).toContain('access_denied');
    expect(res.text).toContain('&lt;b&gt;User said no&lt;/b&gt;');
  });
});
