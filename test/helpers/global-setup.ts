import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { chromiumMissing } from './browser.js';
import { compileSources } from './compile-sources.js';
import { makeDatabaseTemplates, removeDatabaseTemplates, type DatabaseTemplates } from './db-templates.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** a directory for this run only, shared by its test files (e.g. the dashboard built once: browser.ts) */
    testRunDir: string;
    /** the databases every test app starts from, migrated once for the run (db-templates.ts) */
    databaseTemplates: DatabaseTemplates;
  }
}

/**
 * Says once, clearly, which storage engines and services this run covers, gives the run a directory of its
 * own, compiles src/ for the processes the tests start, and migrates the databases the test apps copy; all are
 * removed when it ends.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const lines: string[] = [];
  if (!process.env.TEST_DATABASE_URL) {
    lines.push('SKIP PostgreSQL suites: TEST_DATABASE_URL is not set (HTTP tests run on SQLite only)');
  }
  if (!process.env.TEST_REDIS_URL) {
    lines.push('SKIP Redis suites: TEST_REDIS_URL is not set');
  }
  if (!process.env.TEST_NATS_URL) lines.push('SKIP message bus suites on NATS: TEST_NATS_URL is not set');
  if (!process.env.TEST_AMQP_URL) lines.push('SKIP message bus suites on RabbitMQ: TEST_AMQP_URL is not set');
  const noBrowser = chromiumMissing();
  if (noBrowser) lines.push(`SKIP dashboard browser tests: ${noBrowser}`);
  for (const l of lines) process.stdout.write(`${l}\n`);
  const runDir = mkdtempSync(path.join(tmpdir(), 'ferry-test-run-'));
  project.provide('testRunDir', runDir);
  const compiled = compileSources();
  project.provide('compiledSources', compiled.dir);
  project.onTestsRerun(() => compiled.rebuild());
  const templates = await makeDatabaseTemplates(runDir);
  project.provide('databaseTemplates', templates);
  return async () => {
    rmSync(runDir, { recursive: true, force: true });
    compiled.remove();
    await removeDatabaseTemplates(templates);
  };
}
