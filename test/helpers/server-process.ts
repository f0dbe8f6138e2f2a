import type { ChildProcess } from 'node:child_process';
import { spawnEntry, type LoggedChild } from './child-process.js';

/**
 * PASSWORD_HASH_COST in every test, in-process (helpers/app.ts) or a real server process: scrypt at 2^12
 * instead of 2^15, the same code path with an eighth of the memory and time per hash.
 */
export const TEST_PASSWORD_HASH_COST = '12';

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** every log line so far, parsed */
  logs: Array<Record<string, unknown>>;
  /** what the process wrote to stderr so far (a crash's stack) */
  stderr: () => string;
  /** resolves with the exit code (or the signal's name) and when it happened */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Resolves with the first value `match` returns for a log line, past or future (see spawnEntry). */
  waitFor: LoggedChild['waitFor'];
}

/**
 * Starts the real server (src/server.ts compiled, the same entry `npm start` runs from dist) on a
 * free port, with only the given environment, and resolves once it listens.
 */
export async function startServer(
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  opts: { umask?: number } = {},
): Promise<ServerProcess> {
  // The tests' password cost, unless a test sets its own: sign-ups at the production cost made the process
  // tests slow on a 2-core machine without testing anything more. Their sign-ups and logins all come from
  // one address: the hashing budget is raised like the rate limits (test/server/password-hashing.test.ts sets its own).
  const base = {
    HOST: '127.0.0.1',
    PORT: '0',
    PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
    PASSWORD_HASHES_PER_MINUTE: '100000',
    // no destination checks (SPEC §24) of the test links' made-up hosts in the background
    LINK_CHECKS: 'false',
  };
  const p = spawnEntry('src/server.ts', { ...base, ...env }, nodeArgs, opts);
  const baseUrl = await p.waitFor(
    (e) => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(String(e.msg))?.[1],
    'listen',
  );
  return { child: p.child, baseUrl, logs: p.logs, stderr: p.stderr, exited: p.exited, waitFor: p.waitFor.bind(p) };
}
