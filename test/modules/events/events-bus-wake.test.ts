import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { createLink } from '../../helpers/factories.js';
import { useBeforeAll, useUser } from '../../helpers/fixtures.js';
import { unless } from '../../helpers/skip.js';
import { waitFor } from '../../helpers/scale-out.js';
import { buses, busFixture, eventsFrom, FAST_BUS, timesReceived, type BusFixture } from './events-bus.helpers.js';

/**
 * Events written wake the bus's publisher (and the live stream) at once: this process's notification on SQLite,
 * PostgreSQL's NOTIFY heard after the commit on every instance. Here the publisher's poll is a minute long, so an
 * event that arrives within seconds was woken for.
 */
const bus = buses.find((b) => b.url !== null) ?? buses[0];
const SLOW_POLL = { ...FAST_BUS, pollMs: 60_000, sliceMs: 120_000 };

describe.skipIf(bus.url === null)(unless(bus.missing, 'the publisher woken by events written'), () => {
  describe.each(engines)('on %s', (engine) => {
    const f: BusFixture = useBeforeAll(
      'the app, its bus polled once a minute',
      () => busFixture(engine, bus, { deps: { eventsBus: SLOW_POLL } }),
      (x) => x.close(),
    );
    const owner = useUser(f);

    it('when a link is created, then its event is published at once, not at the next poll', async () => {
      await waitFor('the bus connected', async () => (await f.t.request({ url: '/readyz' })).body.events_bus === 'up');
      // The first slice is under way (it published nothing: the user's sign-up writes no public event).
      await waitFor('the publishing job running', async () =>
        Boolean(
          await f.t.storage.db
            .selectFrom('job_leases')
            .select('name')
            .where('name', '=', 'events-bus')
            .where('lease_until', 'is not', null)
            .executeTakeFirst(),
        ),
      );
      const written = await eventsFrom(f.t);
      const started = Date.now();
      await createLink(f.t, { original_url: 'https://example.com/woken' }, owner.token);
      const ids = (await written()).map((e) => e.event.id);
      await f.consumer.until('the event', () => timesReceived(f.consumer, ids).every((n) => n > 0), 10_000);
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  });
});
