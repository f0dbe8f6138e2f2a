import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Dialect } from '../../db/dialect.js';
import { EVENTS_CHANNEL, eventsWritten, sweepEvents, type StoredEvent } from '../../db/events.js';
import type { Database } from '../../db/types.js';
import { createEventBus, type EventBusOptions } from '../../infra/event-bus.js';
import type { PeriodicJob } from '../../infra/job-runner.js';
import { startPgWakeUp } from '../../infra/pg-wake-up.js';
import type { Clock } from '../../lib/clock.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { createBusPublisher } from './bus-publisher.js';
import { createEventHub, type EventHubOptions } from './event-hub.js';
import { eventsRoutes } from './events.routes.js';
import { eventsSchemas } from './events.schemas.js';

/** How often events past their retention are swept. */
const SWEEP_EVERY_MS = 60 * 60_000;
/** How often the bus's publishing job is tried: a slice follows the last one within this, on whichever instance. */
const BUS_JOB_EVERY_MS = 1_000;

/** SPEC §22's message bus: EVENTS_URL, and what a test changes of its timing or connection. */
export interface EventsBusDeps extends Omit<EventBusOptions, 'log'> {
  /** the publisher's poll and slice (tests shorten them) */
  pollMs?: number;
  sliceMs?: number;
}

export interface EventsModuleDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** EVENTS_RETENTION_DAYS */
  retentionDays: number;
  /** the engine writes in commit order (SQLite): its cursors watch for no late commits */
  embedded: boolean;
  /** the stream's timing (tests shorten the heartbeat) */
  hub?: Omit<EventHubOptions, 'lateCommits'>;
  /** EVENTS_URL's bus; null: none */
  bus?: EventsBusDeps | null;
  /** SQLite: this process's notifications wake the readers */
  dialect: Pick<Dialect, 'onLocalNotify'>;
  /** PostgreSQL (DATABASE_URL): a LISTEN connection wakes the readers; null on SQLite */
  databaseUrl: string | null;
  log: FastifyBaseLogger;
  metrics?: {
    /** the bus confirmed these events */
    recordEventsPublished(events: readonly StoredEvent[]): void;
    /** read at each scrape: whether the bus is connected, and how old the oldest unpublished event is */
    setEventsBusProvider(provider: { up(): boolean; oldestUnpublishedSeconds(): Promise<number> }): void;
    /** read at each scrape: how many events were ever written */
    setEventsWrittenProvider(provider: () => Promise<number>): void;
  };
}

/** The bus (connected by a server's start: startBus), its publisher and the job that runs it, when EVENTS_URL is set. */
function busOf(deps: EventsModuleDeps) {
  if (!deps.bus) return null;
  const { pollMs, sliceMs, ...options } = deps.bus;
  const bus = createEventBus({ ...options, log: deps.log });
  const publisher = createBusPublisher({
    db: deps.db,
    bus,
    clock: deps.clock,
    log: deps.log.child({ bus: bus.target }),
    lateCommits: !deps.embedded,
    ...(deps.metrics ? { onPublished: (events) => deps.metrics!.recordEventsPublished(events) } : {}),
    ...(pollMs !== undefined ? { pollMs } : {}),
    ...(sliceMs !== undefined ? { sliceMs } : {}),
  });
  deps.metrics?.setEventsBusProvider({
    up: () => bus.up,
    oldestUnpublishedSeconds: () => publisher.oldestUnpublishedSeconds(deps.clock.now()),
  });
  const job: PeriodicJob = { name: 'events-bus', everyMs: BUS_JOB_EVERY_MS, run: (signal) => publisher.slice(signal) };
  return { bus, publisher, job };
}

/**
 * What wakes the readers of events when some are written, besides their poll: PostgreSQL's NOTIFY, heard after the
 * commit by every instance (infra/pg-wake-up.ts); on SQLite this process's own notify (the dialect's). Answers the
 * stop. (SQLite's click writer thread notifies nobody: its events are read at the next poll.)
 */
function startWakeUps(deps: EventsModuleDeps, written: () => void): () => Promise<void> | void {
  if (deps.databaseUrl) {
    const listener = startPgWakeUp({
      connectionString: deps.databaseUrl,
      channel: EVENTS_CHANNEL,
      onNotify: written,
      log: deps.log,
      applicationName: 'ferry-events',
    });
    return () => listener.close();
  }
  return deps.dialect.onLocalNotify(EVENTS_CHANNEL, written);
}

/**
 * SPEC §22's public events beyond their writing (db/events.ts, by every module in its changes' transactions):
 * the live stream GET /events with its shared fan-out (event-hub.ts), the message bus (EVENTS_URL:
 * bus-publisher.ts, infra/event-bus.ts) and the sweep of events past EVENTS_RETENTION_DAYS.
 */
export function createEventsModule(deps: EventsModuleDeps) {
  const hub = createEventHub(deps.db, { ...deps.hub, lateCommits: !deps.embedded });
  const retentionMs = deps.retentionDays * 24 * 3_600_000;
  const bus = busOf(deps);
  deps.metrics?.setEventsWrittenProvider(() => eventsWritten(deps.db, deps.embedded));
  /** Events were written: the publisher and the stream read them now rather than at their next poll. */
  const written = (): void => {
    bus?.publisher.wake();
    hub.wake();
  };
  const wakeUps: Array<() => Promise<void> | void> = [];
  return appModule({
    hub,
    /**
     * A server's start (the CLI neither publishes nor streams): the wake-ups on events written, and EVENTS_URL's
     * bus connected in the background, with the place publishing starts from marked at the first start, so that
     * what is written while the bus is still down is published.
     */
    start(): void {
      wakeUps.push(startWakeUps(deps, written));
      if (!bus) return;
      bus.bus.start();
      bus.publisher.init().catch((err: unknown) => deps.log.warn({ err }, 'events bus: no position yet (retried)'));
    },
    /** `up` or `down` (/readyz), null without EVENTS_URL */
    busState: (): 'up' | 'down' | null => (bus ? (bus.bus.up ? 'up' : 'down') : null),
    schemas: eventsSchemas,
    jobs: [
      {
        name: 'sweep-events',
        everyMs: SWEEP_EVERY_MS,
        run: () => sweepEvents(deps.db, deps.clock.now() - retentionMs),
      },
      ...(bus ? [bus.job] : []),
    ],
    apiRoutes: (async (api) => {
      await api.register(eventsRoutes, { hub });
    }) as FastifyPluginAsync<{ basePath: string; version: ApiVersion }>,
    close: async () => {
      for (const stop of wakeUps.splice(0)) await stop();
      await hub.close();
      await bus?.bus.stop();
    },
  });
}

export type EventsModule = ReturnType<typeof createEventsModule>;
