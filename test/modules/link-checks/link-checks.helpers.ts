import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createOutboundHttp, type OutboundHttp, type ResolveHost } from '../../../src/infra/outbound-http.js';
import { TestClock } from '../../helpers/app.js';

/** The test clock running with real time, moved ahead by advance() (a check's next turn comes sooner). */
export class RunningClock extends TestClock {
  private offset = 0;
  override now = (): number => Date.now() + this.offset;
  override advance(ms: number): void {
    this.offset += ms;
  }
}

/** A destination server on loopback: what each host was asked, and how many requests it had at once. */
export interface Destination {
  port: number;
  requests: Array<{ host: string; path: string; at: number; userAgent: string }>;
  maxInFlightPerHost(): number;
  close(): Promise<void>;
}

export async function startDestination(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  delayMs = 0,
): Promise<Destination> {
  const requests: Destination['requests'] = [];
  const inFlight = new Map<string, number>();
  let max = 0;
  const server: Server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    requests.push({ host, path: req.url ?? '', at: performance.now(), userAgent: req.headers['user-agent'] ?? '' });
    const now = (inFlight.get(host) ?? 0) + 1;
    inFlight.set(host, now);
    max = Math.max(max, now);
    res.on('close', () => inFlight.set(host, (inFlight.get(host) ?? 1) - 1));
    setTimeout(() => handler(req, res), delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    maxInFlightPerHost: () => max,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A resolver of the tests' names: a fixed answer per name, or a function of the lookup's number. */
export function resolverOf(names: Record<string, string[] | ((nth: number) => string[])>): ResolveHost {
  const asked = new Map<string, number>();
  return async (hostname) => {
    const n = (asked.get(hostname) ?? 0) + 1;
    asked.set(hostname, n);
    const answer = names[hostname];
    if (answer === undefined) throw Object.assign(new Error(`no test name ${hostname}`), { code: 'ENOTFOUND' });
    return typeof answer === 'function' ? answer(n) : answer;
  };
}

/** An outbound module that records when each request started (a check's start). */
export function countingOutbound(resolve: ResolveHost): OutboundHttp & { starts: number[] } {
  const real = createOutboundHttp({ resolve });
  const starts: number[] = [];
  return {
    starts,
    request(req) {
      starts.push(performance.now());
      return real.request(req);
    },
  };
}

/**
 * Every connection the process opens, by address; PUBLIC_STAND_IN (a public address the tests' names resolve to)
 * is routed to loopback, as if the destination server were on the internet.
 */
export const PUBLIC_STAND_IN = '203.0.113.10';
export function watchConnections(): { hosts: string[]; restore(): void } {
  const proto = net.Socket.prototype as unknown as { connect: (...args: unknown[]) => net.Socket };
  const original = proto.connect;
  const hosts: string[] = [];
  proto.connect = function connect(this: net.Socket, ...args: unknown[]) {
    // Node's own calls pass their normalised arguments: an array whose first item is the options
    const normalised = Array.isArray(args[0]);
    const list = normalised ? (args[0] as unknown[]) : args;
    const first = list[0] as { host?: string } | undefined;
    if (first && typeof first === 'object' && typeof first.host === 'string') {
      hosts.push(first.host);
      if (first.host === PUBLIC_STAND_IN) {
        const moved = { ...first, host: '127.0.0.1' };
        if (normalised) {
          const copy = Object.assign([...list], args[0] as object);
          copy[0] = moved;
          args[0] = copy;
        } else args[0] = moved;
      }
    }
    return original.apply(this, args);
  };
  return { hosts, restore: () => void (proto.connect = original) };
}

/** Polls `probe` until it answers something truthy (an event: a check recorded), failing after `ms`. */
export async function eventually<T>(probe: () => Promise<T | undefined | null | false>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error('eventually: the condition never held');
    await new Promise((r) => setTimeout(r, 50));
  }
}
