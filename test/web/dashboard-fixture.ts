import { mkdirSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, sharedDashboardBuild, watchContext, type PageWatch } from '../helpers/browser.js';
import { freePort } from '../helpers/scale-out.js';

export const ADMIN = { username: 'root-admin', password: 'admin-password-for-e2e' };
/** Screenshots of each main screen (git-ignored). */
export const SHOTS = path.resolve('test-results', 'dashboard');

export interface Dashboard {
  t: TestApp;
  origin: string;
  browser: Browser;
  /** a page of our own on loopback where the test links lead (the tests may reach nothing else) */
  landingUrl: string;
  /** what `vite build` printed */
  buildOutput: string;
  /** a fresh browser profile (its own sessionStorage), watched for errors, other origins and contract breaks */
  open(viewport?: { width: number; height: number }): Promise<{ page: Page; watch: PageWatch }>;
  signIn(page: Page, username: string, password: string): Promise<void>;
  shot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The dashboard as a browser meets it: web/ built as `npm run build` builds it (once per test run, shared by
 * the dashboard suites: sharedDashboardBuild), served by a real app on a free port (SQLite; the first admin from ADMIN_USERNAME
 * unless `admin: false`), Chromium.
 */
export async function startDashboard(
  opts: {
    env?: Record<string, string>;
    /** false: a fresh install, no admin (SPEC §18 first run) */ admin?: boolean;
  } = {},
): Promise<Dashboard> {
  mkdirSync(SHOTS, { recursive: true });
  const { dir: webDir, output: buildOutput } = await sharedDashboardBuild();
  const landing = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Landed</title><p>Landed'),
  );
  landing.listen(0, '127.0.0.1');
  await once(landing, 'listening');
  const landingUrl = `http://127.0.0.1:${(landing.address() as { port: number }).port}/landing`;
  // short_url must name the port the app really listens on.
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  let t: TestApp | undefined;
  let browser: Browser;
  try {
    t = await createTestApp('sqlite', {
      env: {
        WEB_DIR: webDir,
        PORT: String(port),
        PUBLIC_BASE_URL: origin,
        CLICK_FLUSH_MS: '50',
        ...(opts.admin === false ? {} : { ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password }),
        ...opts.env,
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  } catch (err) {
    await t?.close();
    landing.close();
    throw err;
  }
  const app = t;
  const contexts: BrowserContext[] = [];

  return {
    t: app,
    origin,
    browser,
    landingUrl,
    buildOutput,
    async open(viewport = { width: 1100, height: 800 }) {
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      const watch = watchContext(context, { origin, contract: app.contract });
      return { page: await context.newPage(), watch };
    },
    async signIn(page, username, password) {
      await page.goto(`${origin}/app/sign-in`);
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
    },
    async shot(page, name) {
      await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    },
    async close() {
      for (const c of contexts) await c.close();
      await browser.close();
      await app.close();
      landing.close();
    },
  };
}
