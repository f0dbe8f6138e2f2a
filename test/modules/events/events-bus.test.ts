import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { createLink } from '../../helpers/factories.js';
import { useBeforeAll, useUser } from '../../helpers/fixtures.js';
import { unless } from '../../helpers/skip.js';
import { waitFor } from '../../helpers/scale-out.js';
import { buses, busFixture, eventsFrom, receivedOf, timesReceived, type BusFixture } from './events-bus.helpers.js';

/**
 * SPEC §22's message bus, on a real NATS server and a real RabbitMQ broker: every event is published once it is
 * committed, at least once, in commit order per link; a bus that is down delays publishing, never a request.
 * The app reaches the bus through a relay (test/helpers/tcp-proxy.ts) the tests cut and mute.
 */
for (const bus of buses)
  describe.skipIf(bus.missing !== null)(unless(bus.missing, `the message bus on ${bus.kind}`), () => {
    describe.each(engines)('on %s', (engine) => {
      const f: BusFixture = useBeforeAll(
        'the app and its bus',
        () => busFixture(engine, bus),
        (x) => x.close(),
      );
      const owner = useUser(f);

      const readyz = async () => {
        const res = await f.t.request({ url: '/readyz' });
        expect(res.status, res.text).toBe(200);
        return res.body as { events_bus?: string };
      };
      const metrics = async () => (await f.t.request({ url: '/metrics' })).text;
      const patch = (code: string, title: string) =>
        f.t.request({
          method: 'PATCH',
          url: `/api/v1/links/${code}`,
          token: owner.token,
          headers: { 'content-type': 'application/merge-patch+json' },
          payload: { title },
        });

      it('when links change, then each event is published once, in commit order per link, as the envelope with its id', async () => {
        await waitFor('the bus connected', async () => (await readyz()).events_bus === 'up');
        const written = await eventsFrom(f.t);
        const a = await createLink(f.t, { original_url: 'https://example.com/bus-a' }, owner.token);
        const b = await createLink(f.t, { original_url: 'https://example.com/bus-b' }, owner.token);
        for (const n of [1, 2, 3]) {
          expect((await patch(a.short_code, `a${n}`)).status).toBe(200);
          expect((await patch(b.short_code, `b${n}`)).status).toBe(200);
        }
        expect(
          (await f.t.request({ method: 'DELETE', url: `/api/v1/links/${a.short_code}`, token: owner.token })).status,
        ).toBe(204);
        await f.t.app.inject({ url: `/${b.short_code}`, headers: { 'user-agent': 'Mozilla/5.0 Firefox/120.0' } });
        await f.t.app.clickQueue.flush();
        const events = await written();
        expect(events.map((e) => e.event.type).filter((x) => x === 'link.clicked')).toHaveLength(1);
        const ids = events.map((e) => e.event.id);
        await f.consumer.until('every event written', () => timesReceived(f.consumer, ids).every((n) => n > 0));
        expect(timesReceived(f.consumer, ids)).toEqual(ids.map(() => 1));
        const got = receivedOf(f.consumer, ids);
        for (const link of [a, b]) {
          const order = events.filter((e) => e.linkId === link.id).map((e) => e.event.id);
          expect(order.length).toBeGreaterThanOrEqual(4);
          expect(got.filter((m) => order.includes(m.id!)).map((m) => m.id)).toEqual(order);
        }
        for (const m of got) {
          const stored = events.find((e) => e.event.id === m.id)!;
          expect(m.topic).toBe(bus.topicOf(stored.event.type));
          expect(m.body).toEqual(stored.event);
          if (bus.kind === 'RabbitMQ') expect(m).toMatchObject({ persistent: true, contentType: 'application/json' });
        }
        // counted once the bus's confirmation is back, which may be after the consumer has the messages
        const published = /^ferry_events_published_total\{type="link\.updated"\} ([6-9]|\d\d+)/m;
        await waitFor('the published events counted', async () => published.test(await metrics()));
        expect(await metrics()).toMatch(/^ferry_events_bus_up 1$/m);
      });

      it('when the bus goes away, then requests go on, /readyz says down, and every event written meanwhile follows in order once it is back', async () => {
        await waitFor('the bus connected', async () => (await readyz()).events_bus === 'up');
        const written = await eventsFrom(f.t);
        await f.proxy.cut();
        await waitFor('the bus seen down', async () => (await readyz()).events_bus === 'down');
        expect(await metrics()).toMatch(/^ferry_events_bus_up 0$/m);
        const link = await createLink(f.t, { original_url: 'https://example.com/bus-down' }, owner.token);
        for (const n of [1, 2, 3, 4]) expect((await patch(link.short_code, `down ${n}`)).status).toBe(200);
        const events = await written();
        const ids = events.map((e) => e.event.id);
        expect(ids).toHaveLength(5);
        expect(timesReceived(f.consumer, ids)).toEqual([0, 0, 0, 0, 0]);
        await f.proxy.resume();
        await f.consumer.until('the events written while down', () =>
          timesReceived(f.consumer, ids).every((n) => n > 0),
        );
        expect(receivedOf(f.consumer, ids).map((m) => m.id)).toEqual(ids);
        expect((await readyz()).events_bus).toBe('up');
      });

      it('when the bus confirms nothing, then the batch is published again: a duplicate, never a loss', async () => {
        await waitFor('the bus connected', async () => (await readyz()).events_bus === 'up');
        const written = await eventsFrom(f.t);
        const before = f.proxy.connections;
        f.proxy.mute(); // what the app sends still reaches the bus; the confirmations never come back
        const link = await createLink(f.t, { original_url: 'https://example.com/bus-unconfirmed' }, owner.token);
        const [created] = (await written()).map((e) => e.event.id);
        // Sent, not confirmed: the publisher gives up on the connection, makes a new one and publishes it again.
        await f.consumer.until('the event published twice', () => timesReceived(f.consumer, [created!])[0]! >= 2);
        expect(f.proxy.connections).toBeGreaterThan(before);
        expect((await patch(link.short_code, 'after')).status).toBe(200);
        const ids = (await written()).map((e) => e.event.id);
        await f.consumer.until('the next event', () => timesReceived(f.consumer, ids).every((n) => n > 0));
        expect(timesReceived(f.consumer, ids.slice(1))).toEqual([1]);
      });
    });
  });
