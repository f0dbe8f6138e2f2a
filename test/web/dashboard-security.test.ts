import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBeside, sessionToken } from '../helpers/browser.js';
import { createUser } from '../helpers/factories.js';
import { missing, unless } from '../helpers/skip.js';
import { codeAt, STEP_MS } from '../modules/two-factor/two-factor.helpers.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';

// jsqr is CommonJS: its function is the default export under Node's loader, `.default` under the type check.
type JsQr = typeof jsQRModule.default;
const jsQR = ((jsQRModule as unknown as { default?: JsQr }).default ?? jsQRModule) as unknown as JsQr;

const SVG_URL = 'data:image/svg+xml;charset=utf-8,';

/** A code of the same step that is not the right one. */
const wrongCode = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

/**
 * The Security screen (SPEC §23) in Chromium: two-factor set-up with the QR code (decoded back to the otpauth URL)
 * and the key, confirmation with a code computed by otpauth, the recovery codes shown once, and the sign-in that
 * then asks for a code (a used one refused). SQLite only, like the other browser suites (the API underneath is
 * tested on both engines: test/modules/two-factor).
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: security'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  it('when a user sets up two-factor sign-in, then the QR code and key confirm with a code from the app, the recovery codes are shown once, and signing in again asks for a new code', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Security' }).click();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();

    // The QR code: the API's SVG as an image (no markup inserted: Trusted Types), which decodes to the otpauth URL.
    const qr = page.getByRole('img', { name: 'QR code of the key' });
    await qr.waitFor();
    const src = (await qr.getAttribute('src'))!;
    expect(src.startsWith(SVG_URL)).toBe(true);
    expect(decodeURIComponent(src.slice(SVG_URL.length))).toMatch(/^<svg /);
    await expect.poll(() => qr.evaluate((el) => (el as unknown as { complete: boolean }).complete)).toBe(true);
    const png = PNG.sync.read(await qr.screenshot());
    const otpauth = jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? '';
    const secret = (await page.getByTestId('totp-secret').textContent())!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauth).toMatch(/^otpauth:\/\/totp\//);
    expect(new URL(otpauth).searchParams.get('secret')).toBe(secret);
    expect(otpauth).toContain(encodeURIComponent(u.username));
    await d.shot(page, 'security-setup');

    // A wrong code is refused beside the field; the right one turns it on.
    const now = codeAt(secret, d.t.clock.now());
    await page.getByLabel('Code from your app').fill(wrongCode(now));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await expect(errorBeside(page, 'Code from your app')).resolves.toMatch(/not a current code/);
    await page.getByLabel('Code from your app').fill(now);
    await page.getByRole('button', { name: 'Turn on' }).click();

    // Ten recovery codes, shown this once.
    const list = page.getByTestId('recovery-codes');
    await list.waitFor();
    const codes = await list.locator('code').allTextContents();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    await page.getByText('Two-factor sign-in is on. 10 recovery codes left.').waitFor();
    const token = (await sessionToken(page))!;
    expect((await d.t.request({ url: '/api/v1/users/me/totp', token })).body).toMatchObject({
      enabled: true,
      recovery_codes_left: 10,
    });
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await expect(list.count()).resolves.toBe(0);
    await page.reload();
    await page.getByText('Two-factor sign-in is on. 10 recovery codes left.').waitFor();
    const html = await page.content();
    for (const c of codes) expect(html).not.toContain(c);

    // Signing in again: the password alone asks for the code; the code that confirmed is used up; the next one works.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Username').fill(u.username);
    await page.getByLabel('Password').fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const codeField = page.getByLabel('Authentication code');
    await codeField.waitFor();
    await expect(page.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(0);
    await codeField.fill(now);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('Wrong username, password or code (each code works once).').waitFor();
    d.t.clock.advance(STEP_MS);
    await codeField.fill(codeAt(secret, d.t.clock.now()));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await watch.settled()).toEqual([]);
  });
});
