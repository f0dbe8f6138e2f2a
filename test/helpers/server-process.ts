import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** every log line so far, parsed */
  logs: Array<Record<string, unknown>>;
  /** resolves with the exit code (or the signal's name) and when it happened */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/**
 * Starts the real server (`node --import tsx src/server.ts`, the same entry `npm start` runs compiled) on a
 * free port, with only the given environment, and resolves once it listens.
 */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(String(entry.msg));
          if (m) resolve(m[1]!);
        } catch {
          // not a log line
        }
      }
    });
    void exited.then(({ code }) => reject(new Error(`server exited with ${code} before listening:\n${stderr}`)));
    setTimeout(() => reject(new Error(`server did not listen within 20 s:\n${stderr}`)), 20_000).unref();
  });
  return { child, baseUrl, logs, exited };
}
