import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../../helpers/app.js';
import { configProblems } from '../../helpers/config-problems.js';
import { createLink, createUser } from '../../helpers/factories.js';
import { useBeforeAll, useTestApp } from '../../helpers/fixtures.js';
import { freePort } from '../../helpers/scale-out.js';
import { FAST_BUS } from './events-bus.helpers.js';

/**
 * SPEC §22: a bus that is down delays publishing but never a request: `/readyz` stays ready with
 * `events_bus: "down"`, and `ferry_events_bus_up` is 0. No bus server is needed: EVENTS_URL names a closed port.
 */
describe.each(engines)('EVENTS_URL naming a bus that is not there, on %s', (engine) => {
  const t = useBeforeAll(
    'an app whose bus is unreachable',
    async () =>
      createTestApp(engine, {
        env: { EVENTS_URL: `amqp://guest:guest@127.0.0.1:${await freePort()}` },
        deps: { eventsBus: FAST_BUS },
      }),
    (app) => app.close(),
  );

  it('then /readyz stays ready with events_bus down, ferry_events_bus_up is 0, and changes are answered as ever', async () => {
    const owner = await createUser(t);
    const started = Date.now();
    await createLink(t, { original_url: 'https://example.com/no-bus' }, owner.token);
    expect(Date.now() - started).toBeLessThan(2_000);
    const ready = await t.request({ url: '/readyz' });
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok', events_bus: 'down' });
    const metrics = (await t.request({ url: '/metrics' })).text;
    expect(metrics).toMatch(/^ferry_events_bus_up 0$/m);
    expect(metrics).toMatch(/^ferry_events_bus_oldest_unpublished_seconds \d/m);
  });
});

describe.each(engines)('without EVENTS_URL, on %s', (engine) => {
  const t = useTestApp(engine);

  it('then /readyz says nothing of a bus and /metrics has no bus sample', async () => {
    const ready = await t.request({ url: '/readyz' });
    expect(ready.status).toBe(200);
    expect(ready.body).not.toHaveProperty('events_bus');
    const metrics = (await t.request({ url: '/metrics' })).text;
    expect(metrics).not.toMatch(/^ferry_events_bus_up \d/m);
    expect(metrics).not.toMatch(/^ferry_events_bus_oldest_unpublished_seconds \d/m);
  });
});

describe('EVENTS_URL', () => {
  it.each([
    'nats://127.0.0.1:4222',
    'nats://bus.example',
    'nats://token@bus.example:4222',
    'amqp://guest:guest@127.0.0.1:5672',
    'amqp://ferry:secret@mq.example/ferry',
  ])('when it is %s, then it is accepted', (url) => {
    expect(configProblems({ EVENTS_URL: url })).toBe('');
  });

  it.each(['http://bus.example', 'amqps://mq.example', 'kafka://bus.example:9092', 'nats:bus', 'bus.example:4222'])(
    'when it is %s, then the start fails naming the variable and the schemes it takes',
    (url) => {
      expect(configProblems({ EVENTS_URL: url })).toBe(
        `Invalid configuration: EVENTS_URL=${JSON.stringify(url)}: must be a nats://host:port or amqp://user:pass@host/vhost URL`,
      );
    },
  );

  it('when a refused one carries a password, then the message masks it', () => {
    const message = configProblems({ EVENTS_URL: 'amqps://ferry:Hunter2x@mq.example/ferry' });
    expect(message).toContain('EVENTS_URL="amqps://ferry:***@mq.example/ferry"');
    expect(message).not.toContain('Hunter2x');
  });
});
