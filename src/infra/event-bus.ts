import type { FastifyBaseLogger } from 'fastify';
import type { BusConnection, BusConnector, BusMessage } from './event-bus-connection.js';

export type { BusConnection, BusConnector, BusMessage } from './event-bus-connection.js';

/**
 * SPEC §22's message bus (EVENTS_URL): one connection per serving process to NATS (`nats://`) or RabbitMQ
 * (`amqp://`), kept up with backoff. A bus that is down never holds a request: events wait in the `events` table
 * until the publisher (modules/events/bus-publisher.ts) can publish them; `up` is what /readyz and
 * `ferry_events_bus_up` show.
 */

/**
 * A bus URL's connector by its scheme (config.ts accepts these two only). The client library is loaded by the
 * first connection: an instance without EVENTS_URL never loads nats or amqplib (about 70 ms of CPU at start).
 */
export function connectorFor(url: string): BusConnector {
  const scheme = new URL(url).protocol;
  if (scheme === 'nats:') return async (u) => (await import('./event-bus-nats.js')).connectNats(u);
  if (scheme === 'amqp:') return async (u) => (await import('./event-bus-amqp.js')).connectAmqp(u);
  throw new Error(`EVENTS_URL: no bus speaks ${scheme}`);
}

/** The URL without its credentials, for the logs. */
export function busTarget(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}

export class BusDownError extends Error {
  override name = 'BusDownError';
}

export interface EventBusOptions {
  url: string;
  log: FastifyBaseLogger;
  /** another connector (tests); default: by the URL's scheme */
  connect?: BusConnector;
  /** the first wait after a failed connection, doubled at each failure up to maxDelayMs (± 20 % jitter) */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** a publish the bus has not confirmed within this has failed (the connection is dropped and made anew) */
  confirmTimeoutMs?: number;
}

const INITIAL_DELAY_MS = 250;
const MAX_DELAY_MS = 15_000;
const CONFIRM_TIMEOUT_MS = 10_000;

/** Rejects after `ms` unless `p` settles first. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BusDownError(`the bus confirmed nothing within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

// One closure over the connection's state (the connection, its failures, the retry timer).
// eslint-disable-next-line max-lines-per-function
export function createEventBus(opts: EventBusOptions) {
  const connect = opts.connect ?? connectorFor(opts.url);
  const target = busTarget(opts.url);
  const log = opts.log.child({ bus: target });
  const initialDelay = opts.initialDelayMs ?? INITIAL_DELAY_MS;
  const maxDelay = opts.maxDelayMs ?? MAX_DELAY_MS;
  let conn: BusConnection | null = null;
  let started = false;
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;

  const delay = (): number => {
    const base = Math.min(maxDelay, initialDelay * 2 ** Math.min(failures - 1, 20));
    return Math.round(base * (0.8 + 0.4 * Math.random()));
  };

  function retryLater(): void {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void attempt();
    }, delay());
    timer.unref();
  }

  /** The connection is gone (lost, or dropped after a failed publish): down until a new one is made. */
  function lost(c: BusConnection, why: string): void {
    if (conn !== c) return;
    conn = null;
    failures = 1;
    log.warn({ reason: why }, 'events bus: connection lost; events wait in the database until it is back');
    void c.close().catch(() => undefined);
    retryLater();
  }

  async function attempt(): Promise<void> {
    if (stopped || conn) return;
    try {
      const c = await connect(opts.url);
      if (stopped) return void (await c.close().catch(() => undefined));
      conn = c;
      if (failures > 0) log.info('events bus: connected again');
      else log.info('events bus: connected');
      failures = 0;
      void c.closed.then(() => lost(c, 'closed'));
    } catch (err) {
      failures++;
      // the first failure and then one in ten: a bus down for an hour does not fill the log
      if (failures === 1 || failures % 10 === 0)
        log.warn({ err: { message: (err as Error).message }, failures }, 'events bus: cannot connect; retrying');
      retryLater();
    }
  }

  return {
    target,
    /** Connects in the background (a server's start): nothing waits for the bus. */
    start(): void {
      if (started || stopped) return;
      started = true;
      void attempt();
    },
    /** connected now */
    get up(): boolean {
      return conn !== null;
    },
    /**
     * Publishes in order and waits for the bus's confirmation. Down, or a failed or unconfirmed publish: throws
     * (BusDownError when down), and the connection is dropped and made anew, so what was sent is sent again.
     */
    async publish(messages: readonly BusMessage[]): Promise<void> {
      const c = conn;
      if (!c) throw new BusDownError('the events bus is not connected');
      try {
        await within(c.publish(messages), opts.confirmTimeoutMs ?? CONFIRM_TIMEOUT_MS);
      } catch (err) {
        lost(c, `publish failed: ${(err as Error).message}`);
        throw err;
      }
    },
    /** Closes the connection and stops reconnecting (the app closes). */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      const c = conn;
      conn = null;
      await c?.close().catch(() => undefined);
    },
  };
}

export type EventBus = ReturnType<typeof createEventBus>;
