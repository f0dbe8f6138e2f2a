import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import type { ContractValidator } from './contract.js';

/**
 * The dashboard's browser tests run Debian's Chromium through playwright-core (Playwright's own browser
 * download cannot work here). Without it they are skipped, and global-setup prints one line saying why;
 * .ci/run installs it.
 */
export const CHROMIUM_PATH = process.env.TEST_CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null when they can. */
export const chromiumMissing = (): string | null =>
  existsSync(CHROMIUM_PATH)
    ? null
    : `Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium, or set TEST_CHROMIUM_PATH)`;

/** No sandbox (containers), no GPU, and nothing that phones home: the tests may reach loopback only. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `vite build` of web/ into outDir, as `npm run build` does into dist/web; resolves with what it printed. */
export function buildDashboard(outDir: string): Promise<string> {
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const child = spawn(
    process.execPath,
    [vite, 'build', '-c', 'web/vite.config.ts', '--outDir', outDir, '--emptyOutDir'],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`vite build exited with ${code}:\n${output}`)),
    );
  });
}

/**
 * web/ built once per test run, into the run's directory (global-setup.ts): the first dashboard suite to ask
 * builds it, the others (in other workers) wait for that build and share it. Resolves with the directory and
 * what the build printed; every caller sees the same failure when it fails.
 */
export async function sharedDashboardBuild(): Promise<{ dir: string; output: string }> {
  const base = path.join(inject('testRunDir'), 'dashboard');
  const dir = path.join(base, 'web');
  const done = path.join(base, 'build-output.txt');
  const failed = path.join(base, 'build-error.txt');
  try {
    mkdirSync(base); // atomic: exactly one caller gets to build
  } catch {
    await fileAppears(base, [done, failed]);
    if (existsSync(failed)) throw new Error(`the shared dashboard build failed:\n${readFileSync(failed, 'utf8')}`);
    return { dir, output: readFileSync(done, 'utf8') };
  }
  try {
    const output = await buildDashboard(dir);
    writeWhole(done, output);
    return { dir, output };
  } catch (err) {
    writeWhole(failed, String((err as Error).message));
    throw err;
  }
}

/** Written aside and renamed, so that a waiter never reads a file half written. */
function writeWhole(file: string, text: string): void {
  writeFileSync(`${file}.part`, text);
  renameSync(`${file}.part`, file);
}

/** Resolves once one of `files` (in `dir`) exists. */
function fileAppears(dir: string, files: string[]): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dir, () => check());
    const check = () => {
      if (!files.some((f) => existsSync(f))) return;
      watcher.close();
      resolve();
    };
    check();
  });
}

/**
 * What a page did wrong, collected while a test drives it: script errors, console errors (Chromium reports
 * CSP and Trusted Types violations there), requests to any other origin (the dashboard must work offline,
 * with nothing from a CDN), and API answers that break the served OpenAPI document.
 */
export interface PageWatch {
  problems: string[];
  /** waits for the API answers still being checked */
  settled(): Promise<string[]>;
}

export function watchContext(
  context: BrowserContext,
  opts: { origin: string; contract: ContractValidator },
): PageWatch {
  const problems: string[] = [];
  const pending: Array<Promise<void>> = [];
  void context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin === opts.origin) return route.continue();
    problems.push(`request to another origin: ${url.href}`);
    return route.abort();
  });
  const watchPage = (page: Page) => {
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      // Chromium logs every 4xx/5xx fetch; the API's answers are checked against the document below instead.
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource: the server responded'))
        problems.push(`console error: ${msg.text()}`);
    });
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (url.origin !== opts.origin) return;
      if (!url.pathname.startsWith('/api/')) {
        if (response.status() >= 400) problems.push(`${response.status()} for ${url.pathname}`);
        return;
      }
      const request = response.request();
      // A live stream (GET /api/v1/events) stays open as long as its screen: its body never ends, so only its
      // status and type are checked against the document.
      if (response.headers()['content-type']?.startsWith('text/event-stream')) {
        const ct = response.headers()['content-type'];
        problems.push(...opts.contract.check(request.method(), url.pathname + url.search, response.status(), ct, ''));
        return;
      }
      pending.push(
        response.text().then(
          (body) => {
            const found = opts.contract.check(
              request.method(),
              url.pathname + url.search,
              response.status(),
              response.headers()['content-type'],
              body,
            );
            problems.push(...found);
          },
          () => undefined, // a body the page discarded (navigation) cannot be read; nothing to check
        ),
      );
    });
  };
  context.on('page', watchPage);
  return {
    problems,
    async settled() {
      await Promise.all(pending);
      return problems;
    },
  };
}

/** The few DOM names the in-page checks use: the test project is Node's, without the DOM library. */
interface PageElement {
  type?: string;
  labels?: ArrayLike<unknown> | null;
  textContent: string | null;
  outerHTML: string;
  getAttribute(name: string): string | null;
}
export interface PageGlobals {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number };
    querySelectorAll(selector: string): ArrayLike<PageElement>;
  };
  sessionStorage: { getItem(key: string): string | null };
}
/** Any control without an accessible name on the page: inputs, selects, buttons, links, disclosure summaries. */
export async function unlabelledControls(page: Page): Promise<string[]> {
  // Runs in the page: only what is inside the function (and its types) goes there.
  return page.evaluate(() => {
    const { document } = globalThis as unknown as PageGlobals;
    const missing: string[] = [];
    for (const e of Array.from(document.querySelectorAll('input, select, textarea, button, a[href], summary'))) {
      if (e.type === 'hidden') continue;
      const labelled =
        (e.labels?.length ?? 0) > 0 ||
        e.getAttribute('aria-label') ||
        e.getAttribute('aria-labelledby') ||
        (e.textContent ?? '').trim();
      if (!labelled) missing.push(e.outerHTML.slice(0, 120));
    }
    return missing;
  });
}

/** How far the page is wider than its viewport (0: nothing scrolls sideways). */
export const horizontalOverflow = (page: Page): Promise<number> =>
  page.evaluate(() => {
    const { documentElement } = (globalThis as unknown as PageGlobals).document;
    return documentElement.scrollWidth - documentElement.clientWidth;
  });

/** The dashboard's token as the tab keeps it (web/src/session/session-store.ts), or null. */
export const sessionToken = (page: Page): Promise<string | null> =>
  page.evaluate(() => {
    const saved = (globalThis as unknown as PageGlobals).sessionStorage.getItem('ferry.session');
    return (JSON.parse(saved ?? 'null') as { token: string } | null)?.token ?? null;
  });

/** The text of the error message tied to a control (aria-describedby → its `-error` element), once shown. */
export async function errorBeside(page: Page, label: string): Promise<string | null> {
  const control = page.getByLabel(label, { exact: true });
  await expect.poll(() => control.getAttribute('aria-invalid')).toBe('true');
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id.endsWith('-error'));
  expect(ids).toHaveLength(1);
  return page.locator(`[id="${ids[0]}"]`).textContent();
}
