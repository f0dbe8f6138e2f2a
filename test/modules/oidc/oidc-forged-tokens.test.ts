import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestApp } from '../../helpers/app.js';
import { countRows } from '../../helpers/db-state.js';
import { Browser, CLIENT_ID, loginCodeOf, startFakeProvider, startFerry, type FakeProvider } from './oidc.helpers.js';

/**
 * SPEC §23: what a provider (or someone in its place) may send that Ferry must refuse — an ID token signed by
 * another key, for another audience, expired — each a 4xx page and never a 5xx; sign-up closed; and a provider
 * that is down (503 with Retry-After, while the app itself started). The tokens come from a fake provider the
 * test controls: a real one never signs a wrong token.
 */
describe.each(engines)('single sign-on refusals on %s', (engine) => {
  let t: TestApp;
  let origin: string;
  let fake: FakeProvider;

  beforeAll(async () => {
    fake = await startFakeProvider();
    ({ t, origin } = await startFerry(engine, () => ({
      OIDC_ISSUER: fake.issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      REGISTRATION: 'closed',
    })));
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  const now = () => Math.floor(Date.now() / 1000);
  const claims = (nonce: string) => ({
    iss: fake.issuer,
    aud: CLIENT_ID,
    sub: `sub-${randomBytes(6).toString('hex')}`,
    iat: now(),
    exp: now() + 300,
    nonce,
    preferred_username: 'forged',
  });

  /** Starts a sign-in, and comes back from the "provider" with a code and the right state. */
  async function callback() {
    const browser = new Browser();
    const start = await browser.get(`${origin}/auth/oidc/login`);
    const to = new URL(start.location!);
    fake.nonce = to.searchParams.get('nonce')!;
    return browser.get(`${origin}/auth/oidc/callback?code=c0de&state=${to.searchParams.get('state')}`);
  }

  async function expectRefusal(status: number, says: RegExp) {
    const users = await countRows(t, 'users');
    const res = await callback();
    expect(res.status, res.text).toBe(status);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).toMatch(says);
    expect(loginCodeOf(res.location)).toBeNull();
    expect(await countRows(t, 'users')).toBe(users);
  }

  it('when the ID token is signed by a key the provider does not publish, then a 400 page about the token', async () => {
    fake.nextIdToken(claims, 'other');
    await expectRefusal(400, /token[^<]*failed a check[^<]*signature/);
  });

  it('when the ID token is for another audience, then a 400 page naming the audience', async () => {
    fake.nextIdToken((nonce) => ({ ...claims(nonce), aud: 'someone-else' }));
    await expectRefusal(400, /aud/);
  });

  it('when the ID token has expired, then a 400 page naming the expiry', async () => {
    fake.nextIdToken((nonce) => ({ ...claims(nonce), iat: now() - 7200, exp: now() - 3600 }));
    await expectRefusal(400, /exp/);
  });

  it('when the nonce is not the one sent, then a 400 page naming it', async () => {
    fake.nextIdToken((nonce) => ({ ...claims(nonce), nonce: 'replayed-nonce' }));
    await expectRefusal(400, /nonce/);
  });

  it('when the token is valid but sign-up is closed and nobody is linked, then a 403 page and no account', async () => {
    fake.nextIdToken(claims);
    await expectRefusal(403, /sign-up is closed/);
  });
});

describe.each(engines)('a provider that is down, on %s', (engine) => {
  let t: TestApp;
  let origin: string;
  beforeAll(async () => {
    // Nothing listens there: the app must start all the same (discovery waits for the first sign-in).
    const closed = await startFakeProvider();
    await closed.close();
    ({ t, origin } = await startFerry(engine, () => ({ OIDC_ISSUER: closed.issuer, OIDC_CLIENT_ID: CLIENT_ID })));
  });
  afterAll(async () => t?.close());

  it('when the provider cannot be reached, then the app runs and the sign-in answers a 503 page with Retry-After', async () => {
    expect((await t.request({ url: '/api/v1/instance' })).body.oidc_display_name).toBe('single sign-on');
    const res = await new Browser().get(`${origin}/auth/oidc/login`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(res.text).toContain('could not be reached');
  });
});

describe.each(engines)('no single sign-on, on %s', (engine) => {
  let t: TestApp;
  let origin: string;
  beforeAll(async () => {
    ({ t, origin } = await startFerry(engine, () => ({})));
  });
  afterAll(async () => t?.close());

  it('when OIDC_ISSUER is unset, then the instance offers no button and the paths answer a 404 page', async () => {
    expect((await t.request({ url: '/api/v1/instance' })).body.oidc_display_name).toBeNull();
    const res = await new Browser().get(`${origin}/auth/oidc/login`);
    expect(res.status).toBe(404);
    expect(res.text).toContain('no single sign-on');
  });
});
