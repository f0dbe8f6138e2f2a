import { Counter, Gauge, type Registry } from 'prom-client';

/** What the events module tells the metrics of SPEC §22's message bus. */
export interface EventsBusProvider {
  up(): boolean;
  oldestUnpublishedSeconds(): Promise<number>;
}

/**
 * SPEC §22's message bus on /metrics: the events this instance published by type and, once the events module has a
 * bus (EVENTS_URL), `ferry_events_bus_up` (1 connected, 0 down) and how far publishing is behind. Without a bus
 * those two are not registered at all: a 0 would read as a bus that is down.
 */
export function registerEventSeries(registers: Registry[]) {
  const published = new Counter({
    name: 'ferry_events_published_total',
    help: 'Public events this instance published to the message bus (EVENTS_URL) and the bus confirmed, by type (a re-published event counts again)',
    labelNames: ['type'] as const,
    registers,
  });
  let registered = false;
  let written: (() => Promise<number>) | null = null;
  new Counter({
    name: 'ferry_events_written_total',
    help: 'Public events written to the database (SPEC §22), by every instance and process: the events id sequence',
    registers,
    async collect() {
      this.reset();
      this.inc(written ? await written().catch(() => 0) : 0);
    },
  });
  return {
    /** how many events were ever written, asked on each scrape (the events module's) */
    setWrittenProvider(provider: () => Promise<number>): void {
      written = provider;
    },
    recordPublished(events: ReadonlyArray<{ event: { type: string } }>): void {
      const counts = new Map<string, number>();
      for (const e of events) counts.set(e.event.type, (counts.get(e.event.type) ?? 0) + 1);
      for (const [type, n] of counts) published.inc({ type }, n);
    },
    setBusProvider(bus: EventsBusProvider): void {
      if (registered) return;
      registered = true;
      new Gauge({
        name: 'ferry_events_bus_up',
        help: 'Whether this instance is connected to the message bus of EVENTS_URL (1) or not (0: events wait in the database)',
        registers,
        collect() {
          this.set(bus.up() ? 1 : 0);
        },
      });
      new Gauge({
        name: 'ferry_events_bus_oldest_unpublished_seconds',
        help: 'Age of the oldest public event not yet published to the message bus of EVENTS_URL (0: none waiting)',
        registers,
        async collect() {
          this.set(await bus.oldestUnpublishedSeconds().catch(() => 0));
        },
      });
    },
  };
}

/** SPEC §22's deliveries: how attempts ended, and how far behind the oldest undelivered one is. */
export function registerWebhookSeries(registers: Registry[]) {
  let backlog: (() => Promise<number>) | null = null;
  const deliveries = new Counter({
    name: 'ferry_webhook_deliveries_total',
    help:
      'Webhook delivery attempts this instance made, by outcome ' +
      '(delivered; retried: failed, another attempt is due; failed: no more attempts)',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of ['delivered', 'retried', 'failed'] as const) deliveries.inc({ outcome }, 0);
  new Gauge({
    name: 'ferry_webhook_oldest_undelivered_seconds',
    help: 'Age of the oldest webhook delivery not made yet (since its first attempt was due; 0: none waiting)',
    registers,
    async collect() {
      this.set(backlog ? await backlog().catch(() => 0) : 0);
    },
  });
  return {
    record: (outcome: 'delivered' | 'retried' | 'failed') => deliveries.inc({ outcome }),
    setBacklog: (provider: () => Promise<number>) => {
      backlog = provider;
    },
  };
}
