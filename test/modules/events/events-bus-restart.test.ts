import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApp, engines, freshPostgresDatabase, type TestAppOptions } from '../../helpers/app.js';
import { createLink, createUser } from '../../helpers/factories.js';
import { unless } from '../../helpers/skip.js';
import { waitFor } from '../../helpers/scale-out.js';
import { startTcpProxy } from '../../helpers/tcp-proxy.js';
import {
  buses,
  eventsFrom,
  FAST_BUS,
  realClock,
  receivedOf,
  throughProxy,
  timesReceived,
} from './events-bus.helpers.js';

/**
 * SPEC §22: publishing is at least once across restarts. The position (migration 049) moves only once the bus
 * confirmed, so events written while the bus was away and not published when the process stopped are published by
 * the next start, in order.
 */
for (const bus of buses)
  describe.skipIf(bus.missing !== null)(unless(bus.missing, `the message bus on ${bus.kind} across a restart`), () => {
    it.each(engines)(
      'when the app stops with events unpublished on %s, then the next start publishes them in order',
      async (engine) => {
        const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(bus.url!).port) });
        const consumer = await bus.consumer(bus.url!);
        const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-bus-restart-'));
        const db = engine === 'postgres' ? await freshPostgresDatabase() : null;
        const opts: TestAppOptions = {
          dataDir,
          ...(db ? { databaseUrl: db.url } : {}),
          clock: realClock(),
          env: { EVENTS_URL: throughProxy(bus.url!, proxy) },
          deps: { eventsBus: FAST_BUS },
        };
        const ready = (t: Awaited<ReturnType<typeof createTestApp>>, state: string) =>
          waitFor(`the bus ${state}`, async () => (await t.request({ url: '/readyz' })).body.events_bus === state);
        try {
          const first = await createTestApp(engine, opts);
          const owner = await createUser(first);
          await ready(first, 'up');
          await proxy.cut();
          await ready(first, 'down');
          const written = await eventsFrom(first);
          const link = await createLink(first, { original_url: 'https://example.com/restart' }, owner.token);
          for (const n of [1, 2])
            await first.request({
              method: 'PATCH',
              url: `/api/v1/links/${link.short_code}`,
              token: owner.token,
              headers: { 'content-type': 'application/merge-patch+json' },
              payload: { title: `t${n}` },
            });
          const ids = (await written()).map((e) => e.event.id);
          expect(ids).toHaveLength(3);
          await first.close();
          expect(timesReceived(consumer, ids)).toEqual([0, 0, 0]);

          await proxy.resume();
          const second = await createTestApp(engine, opts);
          try {
            await consumer.until('the events of the stopped app', () =>
              timesReceived(consumer, ids).every((n) => n > 0),
            );
            expect(receivedOf(consumer, ids).map((m) => m.id)).toEqual(ids);
          } finally {
            await second.close();
          }
        } finally {
          await consumer.close();
          await proxy.close();
          await db?.drop();
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    );
  });
