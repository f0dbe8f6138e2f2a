/**
 * A webhook receiver on loopback in a process of its own, as a real receiver is: it answers 204 to every POST and
 * counts each `webhook-id` once. In the measuring process its accepts and parses shared the event loop that the
 * benchmark's own work ran on, and on the in-process bench (bench/webhooks.ts) the app's as well.
 *
 * Run as a child (startReceiver): it prints `{"port":…}` once listening; each line written to its standard
 * input is answered with one line of counts (ReceiverCounts).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ReceiverCounts {
  /** distinct webhook-ids */
  unique: number;
  requests: number;
  /** the most requests answered in one wall-clock second */
  busiestSecond: number;
}

export interface Receiver {
  url: string;
  counts(): Promise<ReceiverCounts>;
  /** until `unique` reaches `expected` or `ms` pass; answers the counts then */
  until(expected: number, ms: number): Promise<ReceiverCounts>;
  close(): Promise<void>;
}

const self = fileURLToPath(import.meta.url);

export async function startReceiver(): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', self], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const { port } = JSON.parse(await next()) as { port: number };
  const counts = async (): Promise<ReceiverCounts> => {
    const answer = next();
    child.stdin!.write('\n');
    return JSON.parse(await answer) as ReceiverCounts;
  };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    counts,
    async until(expected, ms) {
      const deadline = Date.now() + ms;
      let c = await counts();
      while (c.unique < expected && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        c = await counts();
      }
      return c;
    },
    async close() {
      child.stdin!.end();
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

function serve(): void {
  const seen = new Set<string>();
  const perSecond = new Map<number, number>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      if (typeof id === 'string') seen.add(id);
      requests += 1;
      const s = Math.floor(Date.now() / 1000);
      perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
  const input = createInterface({ input: process.stdin });
  input.on('line', () => {
    const busiestSecond = Math.max(0, ...perSecond.values());
    process.stdout.write(`${JSON.stringify({ unique: seen.size, requests, busiestSecond })}\n`);
  });
  input.on('close', () => process.exit(0));
}

if (process.argv[1] === self) serve();
