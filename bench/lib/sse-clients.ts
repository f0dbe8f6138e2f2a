/**
 * The subscribers of bench/sse-subscribers.ts, in a process of their own (so that neither their memory nor their
 * event loop is the server's or the load generator's): one `GET /api/v1/events` stream per token of `tokensFile`,
 * each read to the end, its messages counted.
 *
 *   node --import tsx bench/lib/sse-clients.ts '{"url":"http://127.0.0.1:1234","tokensFile":"/tmp/tokens.json"}'
 *
 * Driven over IPC: once every stream has answered, it sends `{ type: 'connected', ...SseStats }`; it answers
 * `'stats'` with `{ type: 'stats', ...SseStats }`; on `'close'` it ends every stream and exits.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';

export interface SseStats {
  /** streams answered 200 and still open */
  open: number;
  /** streams that did not open: their status (or `error: ...`) and how many */
  refused: Record<string, number>;
  /** SSE messages with a `data:` line, and of those the `link.clicked` ones */
  events: number;
  clicked: number;
  /** `: heartbeat` comments */
  heartbeats: number;
  /** bytes read over every stream */
  bytes: number;
  /** streams the server ended, by their final comment (`dropped: ...`, `closing: ...`), or `closed` without one */
  ended: Record<string, number>;
  /** the slowest stream's time to its first byte, ms */
  slowestOpenMs: number;
}

/** Streams opened at once while connecting: below the server's listen backlog (511). */
const OPENING_AT_ONCE = 100;

const stats: SseStats = {
  open: 0,
  refused: {},
  events: 0,
  clicked: 0,
  heartbeats: 0,
  bytes: 0,
  ended: {},
  slowestOpenMs: 0,
};
const requests: http.ClientRequest[] = [];
/** `close` asked: the errors of the streams ended here are not refusals */
let closing = false;
const tally = (into: Record<string, number>, key: string) => (into[key] = (into[key] ?? 0) + 1);

/** Counts the complete messages of `text` (messages end with a blank line); answers the incomplete rest. */
function consume(text: string, last: { comment: string | null }): string {
  let start = 0;
  for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n', start)) {
    const message = text.slice(start, end);
    start = end + 2;
    if (message.includes('data: ')) {
      stats.events += 1;
      if (message.includes('"type":"link.clicked"')) stats.clicked += 1;
    } else if (message === ': heartbeat') stats.heartbeats += 1;
    else if (message.startsWith(': ')) last.comment = message.slice(2);
  }
  return text.slice(start);
}

/** Opens one stream; resolves once it has answered (200: read until the server or `close` ends it). */
function subscribe(url: string, token: string, agent: http.Agent): Promise<void> {
  const started = performance.now();
  let answered = false;
  return new Promise((resolve) => {
    const req = http.get(
      `${url}/api/v1/events`,
      { agent, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } },
      (res) => {
        answered = true;
        if (res.statusCode !== 200) {
          tally(stats.refused, String(res.statusCode));
          res.resume();
          return resolve();
        }
        stats.open += 1;
        stats.slowestOpenMs = Math.max(stats.slowestOpenMs, performance.now() - started);
        const last = { comment: null as string | null };
        let rest = '';
        res.setEncoding('utf8');
        res.on('error', () => undefined); // a reset: counted by 'close'
        res.on('data', (chunk: string) => {
          stats.bytes += Buffer.byteLength(chunk);
          rest = consume(rest + chunk, last);
        });
        res.on('close', () => {
          stats.open -= 1;
          tally(stats.ended, last.comment && last.comment !== 'connected' ? last.comment.split(':')[0]! : 'closed');
        });
        resolve();
      },
    );
    req.on('error', (err) => {
      if (!answered && !closing) tally(stats.refused, `error: ${err.message}`);
      resolve();
    });
    requests.push(req);
  });
}

async function main(): Promise<void> {
  const { url, tokensFile } = JSON.parse(process.argv[2]!) as { url: string; tokensFile: string };
  const tokens = JSON.parse(readFileSync(tokensFile, 'utf8')) as string[];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  let next = 0;
  const opener = async (): Promise<void> => {
    while (next < tokens.length) await subscribe(url, tokens[next++]!, agent);
  };
  await Promise.all(Array.from({ length: OPENING_AT_ONCE }, opener));
  process.on('message', (message) => {
    if (message === 'stats') process.send!({ type: 'stats', ...stats });
    if (message === 'close') {
      closing = true;
      for (const req of requests) req.destroy();
      process.disconnect();
    }
  });
  process.send!({ type: 'connected', ...stats });
}

main().catch((err: unknown) => {
  process.stderr.write(`sse-clients failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
