import Type from 'typebox';
import { PUBLIC_EVENT_TYPES } from '../../db/events.js';

/** SPEC §22's envelope, as the stream's `data:`, a webhook's body and the bus's message carry it. */
export const PublicEventSchema = Type.Object(
  {
    id: Type.String({
      pattern: '^evt_[A-Za-z0-9_-]{22}$',
      maxLength: 26,
      description: 'The event id (`evt_` and 128 random bits): receivers deduplicate on it',
    }),
    type: Type.Union(
      PUBLIC_EVENT_TYPES.map((t) => Type.Literal(t)),
      { description: 'What happened' },
    ),
    timestamp: Type.String({ format: 'date-time', maxLength: 40, description: 'When it was written (ISO 8601, UTC)' }),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          '`link.*`: the link as the v1 API shows it; `link.clicked`: `{ click, link }`; `domain.*`: the domain; `import.completed`: the import job (see the `webhooks` section for each)',
      },
    ),
  },
  { $id: 'PublicEvent', additionalProperties: false, description: 'A public event (SPEC §22)' },
);

export const EventsQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({
        maxLength: 400,
        pattern: '^[a-z_]+\\.[a-z_]+(,[a-z_]+\\.[a-z_]+)*$',
        description: `Comma-separated event types to receive (default: all): ${PUBLIC_EVENT_TYPES.join(', ')}`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const eventsSchemas = [PublicEventSchema];
