import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/program.js';
import type { TestApp } from './app.js';
import { compiledEntry, underUmask } from './child-process.js';
import { TEST_PASSWORD_HASH_COST } from './server-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface FerryRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (a --json run) */
  json<T = any>(): T; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** What a run of `ferry` is given besides its arguments: `stdin` is its standard input, a pipe (not a terminal). */
export interface FerryOptions {
  stdin?: string;
}

/** A run of the real process: `umask` is its file-mode creation mask (default: the test process's). */
export interface FerryProcessOptions extends FerryOptions {
  umask?: number;
}

/** The environment a run of `ferry` gets: only `env`, with the PATH and the tests' cheap password hashes. */
const ferryEnvironment = (env: Record<string, string>): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
  ...env,
});

/** A stream that keeps what is written to it, as the pipe of a spawned process would deliver it (no terminal). */
class Collected extends Writable {
  readonly isTTY = false;
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }
}

/**
 * Runs the `ferry` command-line tool in this process (runCli, what src/cli/ferry.ts runs for the bin) with only
 * the given environment, its output captured and `opts.stdin` as its standard input. Starting a process per
 * command cost a Node start and a load of the app's sources each time; what only a real process shows (signals,
 * umask, a closed pipe, the binary's exit) is tested through startFerry and runFerryProcess.
 */
export async function runFerry(
  args: readonly string[],
  env: Record<string, string>,
  opts: FerryOptions = {},
): Promise<FerryRun> {
  const stdout = new Collected();
  const stderr = new Collected();
  const status = await runCli({
    argv: args,
    env: ferryEnvironment(env),
    stdout,
    stderr,
    stdin: Readable.from([Buffer.from(opts.stdin ?? '')]),
  });
  return { status, stdout: stdout.text, stderr: stderr.text, json: () => JSON.parse(stdout.text) };
}

/**
 * Runs the `ferry` command-line tool as a real process (src/cli/ferry.ts compiled, what the bin runs from dist)
 * with only the given environment.
 */
export function runFerryProcess(
  args: readonly string[],
  env: Record<string, string>,
  opts: FerryProcessOptions = {},
): Promise<FerryRun> {
  return startFerry(args, env, opts).done;
}

/** A running `ferry` process: send it signals, wait for what it writes on stderr, then for its end. */
export interface FerryProcess {
  child: ChildProcess;
  /** resolves once stderr (so far or later) matches; rejects if the process ends first */
  stderrMatches(pattern: RegExp): Promise<void>;
  done: Promise<FerryRun>;
}

export function startFerry(
  args: readonly string[],
  env: Record<string, string>,
  opts: FerryProcessOptions = {},
): FerryProcess {
  const child = spawn(...underUmask(process.execPath, [compiledEntry('src/cli/ferry.ts'), ...args], opts.umask), {
    cwd: root,
    env: ferryEnvironment(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const watchers = new Set<() => void>();
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    for (const w of watchers) w();
  });
  child.stdin.end(opts.stdin ?? '');
  const done = new Promise<FerryRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr, json: () => JSON.parse(stdout) }));
  });
  const stderrMatches = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(stderr)) return;
        watchers.delete(check);
        resolve();
      };
      watchers.add(check);
      check();
      void done.then(() => reject(new Error(`ferry ended before its stderr matched ${pattern}:\n${stderr}`)));
    });
  return { child, stderrMatches, done };
}

/** The environment under which the CLI reads the same storage and secret as a test app. */
export function cliEnvFor(t: TestApp): Record<string, string> {
  return {
    DATA_DIR: t.config.dataDir,
    JWT_SECRET: t.config.jwtSecret ?? '',
    ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
  };
}
