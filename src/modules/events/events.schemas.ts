import Type from 'typebox';
import { PUBLIC_EVENT_TYPES } from '../../db/events.js';

/** SPEC §22's envelope, as the stream's `data:`, a webhook's body and the bus's message carry it. */
export const PublicEventSchema = Type.Object(
  {
    id: Type.String({
      pattern: '^evt_[A-Za-z0-9_-]{22}$',
      maxLength: 26,
      description: 'The event id (`evt_`, the time it was made and 80 random bits): receivers deduplicate on it',
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

const clickFields = {
  id: Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The click record' }),
  clicked_at: Type.String({ format: 'date-time', maxLength: 40 }),
  domain: Type.Union([Type.String({ maxLength: 253, format: 'hostname' }), Type.Null()], {
    description: 'The host the visit came in on; null: the default domain',
  }),
  short_code: Type.String({ maxLength: 64, pattern: '^[0-9A-Za-z_-]+$' }),
  alias: Type.Union([Type.String({ maxLength: 64, pattern: '^[0-9A-Za-z_-]+$' }), Type.Null()], {
    description: 'The alias visited; null: the code',
  }),
  country: Type.Union([Type.String({ maxLength: 2, pattern: '^[A-Z]{2}$' }), Type.Null()]),
  device: Type.String({ maxLength: 20, pattern: '^[a-z]+$', description: 'desktop, mobile, tablet, bot, …' }),
  browser: Type.Union([Type.String({ maxLength: 100, pattern: '^[^\\u0000-\\u001f]*$' }), Type.Null()]),
  os: Type.Union([Type.String({ maxLength: 100, pattern: '^[^\\u0000-\\u001f]*$' }), Type.Null()]),
  referrer_host: Type.Union([Type.String({ maxLength: 255, pattern: '^[^\\s/?#]*$' }), Type.Null()], {
    description: "The referrer's host (never the whole referrer URL)",
  }),
  rule_id: Type.Union([Type.String({ maxLength: 64, pattern: '^[^\\u0000-\\u001f]*$' }), Type.Null()]),
  variant_id: Type.Union([Type.String({ maxLength: 64, pattern: '^[^\\u0000-\\u001f]*$' }), Type.Null()]),
  bot: Type.Boolean({ description: 'A bot by its user agent (webhooks hear of them with include_bots)' }),
};

/** `link.clicked`'s data: the click (never its address or its whole user agent) and the link it reached. */
export const LinkClickedSchema = Type.Object(
  {
    click: Type.Object(clickFields, { additionalProperties: false }),
    link: Type.Object(
      {
        id: Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
        short_code: clickFields.short_code,
        domain: clickFields.domain,
        original_url: Type.String({ format: 'uri', maxLength: 2048 }),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'LinkClicked', additionalProperties: false, description: "`link.clicked`'s data" },
);

const dataOf: Record<string, { schema: unknown; says: string }> = {
  'link.created': {
    schema: { $ref: '#/components/schemas/Link' },
    says: 'A link was created (the API, a bulk request, an import)',
  },
  'link.updated': {
    schema: { $ref: '#/components/schemas/Link' },
    says: 'A link changed (PATCH, rules, disabled or enabled)',
  },
  'link.deleted': {
    schema: { $ref: '#/components/schemas/Link' },
    says: 'A link was deleted or expired: the link as it was',
  },
  'link.clicked': { schema: { $ref: '#/components/schemas/LinkClicked' }, says: 'A click was stored' },
  'domain.verified': {
    schema: { $ref: '#/components/schemas/Domain' },
    says: 'A domain was verified, or passed its re-check again after failing',
  },
  'domain.failing': { schema: { $ref: '#/components/schemas/Domain' }, says: 'A verified domain failed its re-check' },
  'import.completed': {
    schema: { $ref: '#/components/schemas/ImportJob' },
    says: 'An import job ended (its items not included)',
  },
  'link.health_changed': {
    schema: { type: 'object', additionalProperties: true },
    says: "A link's destination changed health (SPEC §24)",
  },
};

/**
 * The OpenAPI 3.1 document's `webhooks`: each event type as the POST a receiver gets (the envelope, its `data`
 * per type). The same envelope is the stream's `data:` and the bus's message.
 */
export const eventWebhooks = Object.fromEntries(
  Object.entries(dataOf).map(([type, { schema, says }]) => [
    type,
    {
      post: {
        operationId: `event_${type.replace('.', '_')}`,
        tags: ['events'],
        summary: `${type}: ${says}`,
        // Ferry calls the receiver: no credential of Ferry's is asked; the body is signed (webhook-signature).
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                allOf: [
                  { $ref: '#/components/schemas/PublicEvent' },
                  {
                    type: 'object',
                    properties: { type: { const: type }, data: schema },
                  },
                ],
              },
            },
          },
        },
        responses: {
          '200': { description: 'Received (any 2xx)' },
          '410': { description: 'Gone: the hook is disabled' },
        },
      },
    },
  ]),
);

export const eventsSchemas = [PublicEventSchema, LinkClickedSchema];
