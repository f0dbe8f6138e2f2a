import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** where this run's JavaScript of src/ is (compile-sources.ts): the processes the tests start run it */
    compiledSources: string;
  }
}

/**
 * How long a process may take to start. Generous: on a slow or loaded 2-core CI machine a start took over 20 s
 * while two suites ran side by side.
 */
const START_TIMEOUT_MS = 60_000;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The compiled file of a process entry of src/ (`src/server.ts` → `<this run's build>/src/server.js`), built
 * from the sources when the run started (test/helpers/compile-sources.ts): what `npm start`, `npm run worker`
 * and the `ferry` bin run from dist/.
 */
export function compiledEntry(entry: string): string {
  if (!/^src\/.+\.ts$/.test(entry)) throw new Error(`not a file of src/: ${entry}`);
  return path.join(inject('compiledSources'), entry.replace(/\.ts$/, '.js'));
}

/**
 * The command and arguments that run `command` under the file-mode creation mask `umask` (through sh, which
 * execs it: the process is the same pid), or as they are without one.
 */
export function underUmask(command: string, args: readonly string[], umask: number | undefined): [string, string[]] {
  if (umask === undefined) return [command, [...args]];
  return ['/bin/sh', ['-c', `umask ${umask.toString(8).padStart(3, '0')} && exec "$0" "$@"`, command, ...args]];
}

export interface LoggedChild {
  child: ChildProcess;
  /** every log line so far, parsed */
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  /** resolves with the exit code (or the signal's name) and when it happened */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Resolves with the first value `match` returns for a log line (past or future); rejects on exit or after START_TIMEOUT_MS. */
  waitFor<T>(match: (entry: Record<string, unknown>) => T | undefined, what: string): Promise<T>;
}

/**
 * Runs one of Ferry's process entries (`src/server.ts`, `src/worker.ts`), compiled (compiledEntry), with only the
 * given environment (and `opts.umask`, when given), collecting its pino lines as they arrive.
 */
export function spawnEntry(
  entry: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  opts: { umask?: number } = {},
): LoggedChild {
  const child = spawn(...underUmask(process.execPath, [...nodeArgs, compiledEntry(entry)], opts.umask), {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const watchers = new Set<(entry: Record<string, unknown>) => void>();
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue; // not a log line
      }
      logs.push(parsed);
      for (const w of watchers) w(parsed);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return {
    child,
    logs,
    stderr: () => stderr,
    exited,
    waitFor<T>(match: (entry: Record<string, unknown>) => T | undefined, what: string): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = (e: Record<string, unknown>) => {
          const found = match(e);
          if (found === undefined) return;
          watchers.delete(check);
          resolve(found);
        };
        for (const e of logs) check(e);
        watchers.add(check);
        void exited.then(({ code }) => reject(new Error(`${entry} exited with ${code} before ${what}:\n${stderr}`)));
        setTimeout(
          () => reject(new Error(`${entry} did not ${what} within ${START_TIMEOUT_MS / 1000} s:\n${stderr}`)),
          START_TIMEOUT_MS,
        ).unref();
      });
    },
  };
}
