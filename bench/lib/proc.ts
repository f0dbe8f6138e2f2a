/**
 * Child processes for the benchmarks, and what Linux tells about them: CPU time from /proc/<pid>/stat and
 * resident memory (VmRSS, and its peak VmHWM) from /proc/<pid>/status. Elsewhere those read as null.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The server's command line as `npm start` runs it (package.json's `start` without `node`): its V8 flags, then
 * dist/src/server.js. Every benchmark's server is started so, as in production (docs/performance.md: the young
 * generation's size is one of those flags).
 */
export const SERVER_ARGS: readonly string[] = (() => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [node, ...args] = pkg.scripts.start.trim().split(/\s+/);
  if (node !== 'node' || args.at(-1) !== 'dist/src/server.js')
    throw new Error(`package.json's start script is not "node [flags] dist/src/server.js": ${pkg.scripts.start}`);
  return args;
})();

/** SERVER_ARGS' V8 flags alone, for a server started from another entry file. */
export const SERVER_NODE_FLAGS: readonly string[] = SERVER_ARGS.slice(0, -1);

export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** User + system CPU seconds in a /proc stat file (a process's or a thread's); null when it cannot be read. */
function statCpuSeconds(file: string): number | null {
  try {
    const stat = readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a process has used so far: all its threads, or with `mainThread` only the main one. */
export function cpuSeconds(pid: number | undefined, mainThread = false): number | null {
  return statCpuSeconds(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`);
}

/**
 * CPU seconds of each thread of this process so far: lets bench/ingest.ts tell the click writer thread's CPU
 * from the producer's and the garbage collector's helpers. Empty where /proc is not.
 */
export function threadCpuSeconds(): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    const seconds = statCpuSeconds(`/proc/self/task/${tid}/stat`); // null: the thread ended meanwhile
    if (seconds !== null) out.set(Number(tid), seconds);
  }
  return out;
}

/** A `kB` field of /proc/<pid>/status, in bytes; null when it cannot be read. */
function statusBytes(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** The peak resident set size of a process (VmHWM), in bytes. */
export const peakRssBytes = (pid: number | undefined): number | null => statusBytes(pid, 'VmHWM');

/** The resident set size of a process now (VmRSS), in bytes. */
export const rssBytes = (pid: number | undefined): number | null => statusBytes(pid, 'VmRSS');

export interface Server {
  child: ChildProcess;
  port: number;
  url: string;
}

/** Resolves once the child's stdout has carried `text` (it keeps reading, so the pipe never fills); rejects if it exits first. */
function stdoutCarries(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    let found = false;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (found) return;
      seen = (seen + chunk).slice(-4 * text.length - 4096);
      if (seen.includes(text)) {
        found = true;
        resolve();
      }
    });
    child.once('exit', (code) => {
      if (!found) reject(new Error(`exited with ${code} before logging "${text}"`));
    });
  });
}

/**
 * Starts `node <args>` with only `env` (and PATH) and waits until it accepts connections on its port, and with
 * `readyLog`, until its log has said so too (Ferry: "schema compilers warmed", its background compilation done).
 */
export async function startServer(
  name: string,
  args: string[],
  env: Record<string, string>,
  opts: { readyLog?: string } = {},
): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env, PORT: String(port) },
    stdio: ['ignore', opts.readyLog ? 'pipe' : 'ignore', 'inherit'],
  });
  const ready = opts.readyLog ? stdoutCarries(child, opts.readyLog) : Promise.resolve();
  ready.catch(() => undefined);
  for (let i = 0; i < 600; i += 1) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) {
      await ready;
      return { child, port, url: `http://127.0.0.1:${port}` };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not start`);
}

/** SIGTERM, then the exit code (a graceful shutdown flushes the click queue first). */
export async function stopServer(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = await exited;
  return code as number | null;
}

/** Runs `node <args>` to completion and parses the last line of its stdout as JSON. */
export async function runJson<T>(args: string[], env: Record<string, string>): Promise<{ result: T; pid: number }> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}`);
  const last = out.trim().split('\n').pop() ?? '';
  return { result: JSON.parse(last) as T, pid: child.pid! };
}

/**
 * A machine-speed probe for the report's header: the best of three timings of a fixed JavaScript loop (JIT
 * code, no I/O). Absolute rates differ between machines by far more than the noise of one; this number lets a
 * reader tell a slow machine from a slow build when comparing runs.
 */
export function cpuProbeMs(): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round += 1) {
    const started = performance.now();
    let x = 0;
    for (let i = 0; i < 50_000_000; i += 1) x = (x + i * 7) % 1_000_003;
    best = Math.min(best, performance.now() - started);
    if (x < 0) process.stderr.write('unreachable\n'); // keeps the loop from being optimised away
  }
  return best;
}
