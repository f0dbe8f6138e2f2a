/**
 * SPEC §22's events: how long they are kept (the stream resumes, and consumers catch up, within it), and the
 * message bus they are published to (docs/events.md).
 */
import Type, { type TSchema } from 'typebox';
import { int, optional } from '../lib/env-variables.js';

export const eventsVariables = {
  EVENTS_RETENTION_DAYS: int(
    7,
    1,
    365,
    'Days public events (SPEC §22: `link.created`, `link.clicked`, …) are kept: the live stream resumes (`Last-Event-ID`) within them; older ones are swept hourly',
  ),
  EVENTS_URL: optional(Type.String({ read: 'busUrl' }), {
    description:
      'A message bus every public event is published to, at least once and in commit order per link: `nats://host:port` (subject `ferry.<type>`, header `Nats-Msg-Id`: the event id) or `amqp://user:pass@host/vhost` (durable topic exchange `ferry.events`, routing key `<type>`, persistent, `messageId`: the event id; without a path, the default vhost). A bus that is down delays publishing, never a request (`/readyz`: `events_bus: "down"`)',
  }),
} satisfies Record<string, TSchema>;
