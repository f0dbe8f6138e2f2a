import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBeside } from '../helpers/browser.js';
import { createUser } from '../helpers/factories.js';
import { startDashboard, type Dashboard } from './dashboard-fixture.js';
import { missing, unless } from '../helpers/skip.js';

/** Nothing on the page shows the envelope's generic message or the validator's own words. */
async function noValidatorWords(page: Page): Promise<void> {
  const text = (await page.locator('main').textContent()) ?? '';
  expect(text).not.toMatch(/Request body is invalid|must NOT have|must match pattern/);
}

/**
 * Form errors at their fields in plain words (issue 28): sign-up, sign-in and the domain form (the link and
 * key forms: dashboard-links.test.ts), each message from the envelope's details, said as a person would.
 * And the first run (SPEC §18): a fresh install's sign-in page names `npx ferry admin create <username>`.
 * SQLite only, like the other browser tests (see dashboard-flow.test.ts).
 */
describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: form errors'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => d?.close());

  it('when sign-up is refused, then each field says what is wrong in plain words, and a taken name is said at the username', async () => {
    const { page, watch } = await d.open();
    await page.goto(`${d.origin}/app/sign-up`);
    await page.getByText('New accounts are activated by an admin.').waitFor();
    await page.getByLabel('Username').fill('no spaces!');
    await page.getByLabel('Email').fill('not-an-address');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await expect(errorBeside(page, 'Username')).resolves.toBe(
      'may contain only letters, digits, dots, underscores and hyphens',
    );
    await expect(errorBeside(page, 'Email')).resolves.toBe('must be a valid e-mail address');
    await expect(errorBeside(page, 'Password')).resolves.toBe('must be at least 8 characters long');
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Please correct the 3 fields marked below.');
    await expect(page.locator(':focus').getAttribute('name')).resolves.toBe('username');
    await noValidatorWords(page);
    await d.shot(page, 'sign-up-errors');

    const taken = await createUser(d.t, { status: 'active' });
    await page.getByLabel('Username').fill(taken.username);
    await page.getByLabel('Email').fill(`${taken.username}-2@example.com`);
    await page.getByLabel('Password').fill('long-enough-password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    // The first answer's messages stay until the second's replace them.
    await expect.poll(() => errorBeside(page, 'Username')).toBe('is already taken');
    await expect(page.getByLabel('Email').getAttribute('aria-invalid')).resolves.toBe('false');
    expect(await watch.settled()).toEqual([]);
  });

  it('when sign-in is sent empty, then both fields say they are needed; a wrong password says so once', async () => {
    const { page, watch } = await d.open();
    await page.goto(`${d.origin}/app/sign-in`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(errorBeside(page, 'Username')).resolves.toBe('is required');
    await expect(errorBeside(page, 'Password')).resolves.toBe('is required');
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Please correct the 2 fields marked below.');
    await noValidatorWords(page);
    await page.getByLabel('Username').fill('nobody-here');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('Wrong username or password.').waitFor();
    expect(await watch.settled()).toEqual([]);
  });

  it('when a domain is refused, then the host name field says why in plain words', async () => {
    const u = await createUser(d.t, { status: 'active' });
    const { page, watch } = await d.open();
    await d.signIn(page, u.username, u.password);
    await page.goto(`${d.origin}/app/domains`);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect(errorBeside(page, 'Host name')).resolves.toBe('is required');
    await page.getByLabel('Host name').fill('https://go.example.com/path');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect
      .poll(() => errorBeside(page, 'Host name'))
      .toBe('must be a host name alone, without spaces, a scheme, a port or a path');
    await expect(page.getByRole('alert').first().textContent()).resolves.toBe('Please correct the field marked below.');
    await noValidatorWords(page);
    expect(await watch.settled()).toEqual([]);
  });
});

describe.skipIf(missing.chromium !== null)(unless(missing.chromium, 'the dashboard in Chromium: first run'), () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard({ admin: false, env: { REGISTRATION: 'open' } });
  });
  afterAll(async () => d?.close());

  it('when no admin exists yet, then the sign-in page says to run npx ferry admin create <username>, and once one exists it does not', async () => {
    const { page, watch } = await d.open();
    await page.goto(`${d.origin}/app/sign-in`);
    const hint = page.getByTestId('first-run');
    await expect(hint.textContent()).resolves.toBe(
      'No admin account exists yet. Create the first one on the server with npx ferry admin create <username>, then sign in with it.',
    );
    await expect(hint.locator('code').textContent()).resolves.toBe('npx ferry admin create <username>');
    await d.shot(page, 'sign-in-first-run');
    // REGISTRATION=open: sign-up says accounts work at once, and after it the sign-in page says so too.
    await page.getByRole('link', { name: 'Sign up' }).click();
    await page.getByText('New accounts can be used at once.').waitFor();
    await page.getByLabel('Username').fill('first-person');
    await page.getByLabel('Email').fill('first-person@example.com');
    await page.getByLabel('Password').fill('long-enough-password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByText('Your account was created. You can sign in now.').waitFor();

    await createUser(d.t, { role: 'admin' });
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expect.poll(async () => (await d.t.request({ url: '/api/v1/instance' })).body.first_admin_command).toBeNull();
    await page.getByText('Your account was created. You can sign in now.').waitFor();
    await expect(hint.count()).resolves.toBe(0);
    expect(await watch.settled()).toEqual([]);
  });
});
