import { chromiumMissing } from './browser.js';

/** Says once, clearly, which storage engines and services this run covers. */
export default function setup(): void {
  const lines: string[] = [];
  if (!process.env.TEST_DATABASE_URL) {
    lines.push('SKIP PostgreSQL suites: TEST_DATABASE_URL is not set (HTTP tests run on SQLite only)');
  }
  if (!process.env.TEST_REDIS_URL) {
    lines.push('SKIP Redis suites: TEST_REDIS_URL is not set');
  }
  const noBrowser = chromiumMissing();
  if (noBrowser) lines.push(`SKIP dashboard browser tests: ${noBrowser}`);
  for (const l of lines) process.stdout.write(`${l}\n`);
}
