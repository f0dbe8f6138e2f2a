import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { launchChromium, sessionToken, sharedDashboardBuild } from '../helpers/browser.js';
import { missing, unless } from '../helpers/skip.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  startFerry,
  startRealProvider,
  type RealProvider,
} from '../modules/oidc/oidc.helpers.js';

/**
 * SPEC §23 in a real browser (Chromium): the sign-in screen's "Sign in with …" button, the provider (the real
 * oidc-provider on loopback), the callback, and the dashboard exchanging the login code for its session. SQLite
 * only, as the other dashboard suites: the API underneath is tested on both engines.
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'single sign-on through the dashboard'), () => {
  let t: TestApp;
  let origin: string;
  let provider: RealProvider;
  let browser: Browser;
  beforeAll(async () => {
    const { dir } = await sharedDashboardBuild();
    ({ t, origin } = await startFerry(
      'sqlite',
      () => ({
        WEB_DIR: dir,
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        OIDC_CLIENT_SECRET: CLIENT_SECRET,
        OIDC_DISPLAY_NAME: 'Acme SSO',
      }),
      async (o) => {
        provider = await startRealProvider(`${o}/auth/oidc/callback`);
      },
    ));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await provider?.close();
  });

  it('when the user clicks "Sign in with Acme SSO", then the provider signs them in and the dashboard opens signed in, with the code gone from the address', async () => {
    const username = `sso_${randomBytes(3).toString('hex')}`;
    provider.signInAs({ sub: `sub-${username}`, preferred_username: username, email: `${username}@corp.example` });
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${origin}/app/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(new URL(page.url()).searchParams.has('login_code')).toBe(false);
    const token = await sessionToken(page);
    expect(token).not.toBeNull();
    const me = await t.request({ url: '/api/v1/users/me', token: token! });
    expect(me.body.username).toBe(username);
    expect(errors).toEqual([]);

    // A login code that was used: the sign-in screen says single sign-on did not complete.
    const again = await context.newPage();
    await again.goto(`${origin}/app/?login_code=already-used-code`);
    await again.getByText('Single sign-on could not be completed').waitFor();
    await context.close();
  });
});
