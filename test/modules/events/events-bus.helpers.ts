import { openEventsCursor, type StoredEvent } from '../../../src/db/events.js';
import { createTestApp, TestClock, type Engine, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { amqpConsumer, natsConsumer, type BusConsumer } from '../../helpers/bus-consumers.js';
import { missing } from '../../helpers/skip.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';

/** The two buses of SPEC §22, each with the server tests reach (TEST_NATS_URL, TEST_AMQP_URL) and how it names a type. */
export const buses = [
  {
    kind: 'NATS',
    url: process.env.TEST_NATS_URL ?? null,
    missing: missing.nats,
    consumer: natsConsumer,
    topicOf: (type: string) => `ferry.${type}`,
  },
  {
    kind: 'RabbitMQ',
    url: process.env.TEST_AMQP_URL ?? null,
    missing: missing.amqp,
    consumer: amqpConsumer,
    topicOf: (type: string) => type,
  },
] as const;

export type Bus = (typeof buses)[number];

/** The bus's URL with its host replaced by the relay's (credentials and vhost kept). */
export function throughProxy(url: string, proxy: Pick<TcpProxy, 'port'>): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}

/** A clock that follows real time: the publishing job takes its turns by it (job_leases), as in production. */
export function realClock(): TestClock {
  const clock = new TestClock();
  clock.now = () => Date.now();
  return clock;
}

/** Short waits, so that a test sees reconnections and lost confirmations within a second or two. */
export const FAST_BUS = { initialDelayMs: 50, maxDelayMs: 400, confirmTimeoutMs: 1_500, pollMs: 50, sliceMs: 5_000 };

export interface BusFixture {
  t: TestApp;
  proxy: TcpProxy;
  consumer: BusConsumer;
  close(): Promise<void>;
}

/** An app whose EVENTS_URL reaches the bus through a relay the test can cut, and a consumer on the bus itself. */
export async function busFixture(engine: Engine, bus: Bus, opts: TestAppOptions = {}): Promise<BusFixture> {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(bus.url!).port) });
  const consumer = await bus.consumer(bus.url!);
  const t = await createTestApp(engine, {
    clock: realClock(),
    ...opts,
    env: { EVENTS_URL: throughProxy(bus.url!, proxy), ...opts.env },
    deps: { eventsBus: FAST_BUS, ...opts.deps },
  });
  return {
    t,
    proxy,
    consumer,
    async close() {
      await t.close();
      await consumer.close();
      await proxy.close();
    },
  };
}

/** Every event written from now on, read when asked (the table is the truth the bus is checked against). */
export async function eventsFrom(t: Pick<TestApp, 'storage'>) {
  const cursor = await openEventsCursor(t.storage.db, 'end');
  const read: StoredEvent[] = [];
  return async (): Promise<StoredEvent[]> => {
    for (;;) {
      const batch = await cursor.read();
      read.push(...batch);
      if (batch.length === 0) return read;
    }
  };
}

/** How often each of `ids` was received. */
export function timesReceived(consumer: BusConsumer, ids: readonly string[]): number[] {
  return ids.map((id) => consumer.received.filter((m) => m.id === id).length);
}

/** The received messages of `ids`, in the order the bus delivered them. */
export const receivedOf = (consumer: BusConsumer, ids: readonly string[]) => {
  const wanted = new Set(ids);
  return consumer.received.filter((m) => m.id !== undefined && wanted.has(m.id));
};
