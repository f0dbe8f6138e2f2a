import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestApp } from './app.js';
import { TEST_PASSWORD_HASH_COST } from './server-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface FerryRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (a --json run) */
  json<T = any>(): T; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Runs the `ferry` command-line tool as a real process (`node --import tsx src/cli/ferry.ts`, what the bin runs
 * compiled) with only the given environment; `stdin` is written to its standard input (a pipe, not a terminal).
 */
export function runFerry(args: readonly string[], env: Record<string, string>, opts: { stdin?: string } = {}): Promise<FerryRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ferry.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(opts.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr, json: () => JSON.parse(stdout) }));
  });
}

/** The environment under which the CLI reads the same storage and secret as a test app. */
export function cliEnvFor(t: TestApp): Record<string, string> {
  return {
    DATA_DIR: t.config.dataDir,
    JWT_SECRET: t.config.jwtSecret ?? '',
    ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
  };
}
