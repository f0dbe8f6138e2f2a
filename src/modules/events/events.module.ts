import type { FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import { sweepEvents } from '../../db/events.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { createEventHub, type EventHubOptions } from './event-hub.js';
import { eventsRoutes } from './events.routes.js';
import { eventsSchemas } from './events.schemas.js';

/** How often events past their retention are swept. */
const SWEEP_EVERY_MS = 60 * 60_000;

export interface EventsModuleDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** EVENTS_RETENTION_DAYS */
  retentionDays: number;
  /** the engine writes in commit order (SQLite): its cursors watch for no late commits */
  embedded: boolean;
  /** the stream's timing (tests shorten the heartbeat) */
  hub?: Omit<EventHubOptions, 'lateCommits'>;
}

/**
 * SPEC §22's public events beyond their writing (db/events.ts, by every module in its changes' transactions):
 * the live stream GET /events with its shared fan-out (event-hub.ts), and the sweep of events past
 * EVENTS_RETENTION_DAYS.
 */
export function createEventsModule(deps: EventsModuleDeps) {
  const hub = createEventHub(deps.db, { ...deps.hub, lateCommits: !deps.embedded });
  const retentionMs = deps.retentionDays * 24 * 3_600_000;
  return appModule({
    hub,
    schemas: eventsSchemas,
    jobs: [
      {
        name: 'sweep-events',
        everyMs: SWEEP_EVERY_MS,
        run: () => sweepEvents(deps.db, deps.clock.now() - retentionMs),
      },
    ],
    apiRoutes: (async (api) => {
      await api.register(eventsRoutes, { hub });
    }) as FastifyPluginAsync<{ basePath: string; version: ApiVersion }>,
    close: () => hub.close(),
  });
}

export type EventsModule = ReturnType<typeof createEventsModule>;
