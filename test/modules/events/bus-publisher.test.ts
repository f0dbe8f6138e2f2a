import { describe, expect, it } from 'vitest';
import { recordPublicEvents } from '../../../src/db/events.js';
import type { BusConnection, BusMessage } from '../../../src/infra/event-bus.js';
import { createTestApp, engines } from '../../helpers/app.js';
import { createBusPublisher } from '../../../src/modules/events/bus-publisher.js';
import { createLink } from '../../helpers/factories.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/scale-out.js';
import { unless } from '../../helpers/skip.js';
import { FAST_BUS, realClock } from './events-bus.helpers.js';

/**
 * The publisher's promises (SPEC §22: at least once, in commit order), against a bus of the test's own that
 * fails when told to: what the bus did not confirm is published again, and the stored position (migration 049)
 * never passes an event that is not published, even one that commits after later ones (PostgreSQL).
 */
function fakeBus() {
  const sent: BusMessage[] = [];
  const confirmed: BusMessage[] = [];
  let failNext = 0;
  let connections = 0;
  const connect = async (): Promise<BusConnection> => {
    connections++;
    let closedNow!: () => void;
    const closed = new Promise<void>((resolve) => (closedNow = resolve));
    return {
      async publish(messages) {
        sent.push(...messages);
        if (failNext > 0) {
          failNext--;
          throw new Error('the bus refused the batch');
        }
        confirmed.push(...messages);
      },
      closed,
      close: async () => closedNow(),
    };
  };
  return {
    connect,
    sent,
    confirmed,
    get connections() {
      return connections;
    },
    failNextPublish(): void {
      failNext = 1;
    },
  };
}

const timesIn = (messages: readonly BusMessage[], id: string) => messages.filter((m) => m.id === id).length;

describe.each(engines)('the bus publisher on %s', (engine) => {
  const bus = fakeBus();
  const t = useTestApp(engine, {
    clock: realClock(),
    env: { EVENTS_URL: 'nats://127.0.0.1:4222' },
    deps: { eventsBus: { ...FAST_BUS, connect: bus.connect } },
  });
  const owner = useUser(t);
  const position = async () =>
    t.storage.db.selectFrom('events_bus_positions').selectAll().where('name', '=', 'bus').executeTakeFirstOrThrow();
  const idOf = async (eventId: string) =>
    Number(
      (await t.storage.db.selectFrom('events').select('id').where('event_id', '=', eventId).executeTakeFirstOrThrow())
        .id,
    );

  it('when the bus fails a batch, then it is published again on a new connection and the position waits for it', async () => {
    await waitFor('the bus connected', async () => (await t.request({ url: '/readyz' })).body.events_bus === 'up');
    const before = bus.connections;
    bus.failNextPublish();
    const link = await createLink(t, { original_url: 'https://example.com/refused' }, owner.token);
    const event = await t.storage.db
      .selectFrom('events')
      .select(['id', 'event_id'])
      .where('link_id', '=', link.id)
      .executeTakeFirstOrThrow();
    await waitFor('the event confirmed', async () => timesIn(bus.confirmed, event.event_id) === 1);
    expect(timesIn(bus.sent, event.event_id)).toBe(2);
    expect(bus.connections).toBeGreaterThan(before);
    await waitFor('the position past it', async () => Number((await position()).position) >= Number(event.id));
  });

  it.skipIf(engine !== 'postgres')(
    unless(
      engine === 'postgres' ? null : 'SQLite commits one transaction at a time, in id order',
      'when an event commits after later ones, then it is published when it commits and the position waits for it',
    ),
    async () => {
      await waitFor('the bus connected', async () => (await t.request({ url: '/readyz' })).body.events_bus === 'up');
      // A transaction takes an id and stays open while a later event commits.
      const tx = await t.storage.db.startTransaction().execute();
      const [late] = await recordPublicEvents(tx, t.storage.dialect, [
        { type: 'domain.verified', data: { id: 1 }, userId: null },
      ]);
      const link = await createLink(t, { original_url: 'https://example.com/early' }, owner.token);
      const early = await t.storage.db
        .selectFrom('events')
        .select(['id', 'event_id'])
        .where('link_id', '=', link.id)
        .executeTakeFirstOrThrow();
      await waitFor('the later event published', async () => timesIn(bus.confirmed, early.event_id) === 1);
      await waitFor('its publishing recorded', async () => Number((await position()).published) >= Number(early.id));
      const lateId = Number(early.id) - 1;
      expect(Number((await position()).position)).toBeLessThan(lateId);
      await tx.commit().execute();
      expect(await idOf(late!.id)).toBe(lateId);
      await waitFor('the late event published', async () => timesIn(bus.confirmed, late!.id) === 1);
      await waitFor('the position past both', async () => Number((await position()).position) >= Number(early.id));
      const order = bus.confirmed.map((m) => m.id);
      expect(order.indexOf(late!.id)).toBeGreaterThan(order.indexOf(early.event_id));
    },
  );
});

describe.each(engines)('the bus publisher stopping on %s', (engine) => {
  it('when the job is aborted while a batch is being published, then the run ends then, not at its next poll', async () => {
    const t = await createTestApp(engine);
    let entered!: () => void;
    const publishing = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      // A poll of a minute, and a bus that holds the batch until the run has been told to stop.
      const publisher = createBusPublisher({
        db: t.storage.db,
        bus: {
          up: true,
          async publish() {
            entered();
            await held;
          },
        },
        clock: t.clock,
        log: t.app.log,
        lateCommits: engine === 'postgres',
        pollMs: 60_000,
        sliceMs: 120_000,
      });
      await publisher.init();
      await t.storage.db
        .transaction()
        .execute((tx) =>
          recordPublicEvents(tx, t.storage.dialect, [{ type: 'domain.verified', data: { id: 1 }, userId: null }]),
        );
      const stop = new AbortController();
      const run = publisher.slice(stop.signal);
      await publishing;
      const started = Date.now();
      stop.abort(); // what the job runner does when the instance stops
      release();
      expect(await run).toBe(1);
      // The abort came during the batch: it used to be missed, and the run waited out the minute's poll.
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      release();
      await t.close();
    }
  }, 120_000);
});
