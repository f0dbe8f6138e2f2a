import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface WorkerProcess {
  child: ChildProcess;
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the real click worker (`node --import tsx src/worker.ts`, what `npm run worker` runs compiled) with
 * only the given environment. `ready` waits for its "click worker started" line; without it, the promise
 * resolves at once (a worker expected to refuse its configuration).
 */
export async function startWorker(env: Record<string, string>, opts: { ready?: boolean } = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const started = new Promise<void>((resolve, reject) => {
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
          if (entry.msg === 'click worker started') resolve();
        } catch {
          // not a log line
        }
      }
    });
    void exited.then(({ code }) => reject(new Error(`worker exited with ${code} before starting:\n${stderr}`)));
    setTimeout(() => reject(new Error(`worker did not start within 20 s:\n${stderr}`)), 20_000).unref();
  });
  if (opts.ready !== false) await started;
  else started.catch(() => undefined);
  return { child, logs, stderr: () => stderr, exited };
}
