import Type, { type Static } from 'typebox';
import { PUBLIC_EVENT_TYPES } from '../../db/events.js';
import { Count, Id, IdParam, Instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';

/** SPEC §22: the webhooks resource (v1, snake_case). */
export const WEBHOOK_URL_MAX = 2048;
/** Text without control characters but tab, line feed and carriage return (a receiver's answer, as kept). */
const PRINTABLE_TEXT = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$';
const Url = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_URL_MAX,
  format: 'uri',
  pattern: NO_CONTROL_CHARACTERS,
  description:
    'An absolute http(s) URL; every address its host resolves to must be public (unless WEBHOOK_ALLOW_PRIVATE)',
});
const EventType = Type.Union(
  PUBLIC_EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'An event type of SPEC §22' },
);
const Events = Type.Array(EventType, {
  minItems: 1,
  maxItems: PUBLIC_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types the hook hears (`webhook.test` is always sent by POST …/test)',
});
const DomainId = Type.Integer({
  format: 'int64',
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'A domain id (0: the default domain)',
});
const Domains = Type.Array(DomainId, {
  maxItems: 100,
  uniqueItems: true,
  description: "Only events about these domains (the caller's own; an admin: any); absent or null: every domain",
});
const Description = Type.String({ maxLength: 256, pattern: NO_CONTROL_CHARACTERS, description: 'A note for people' });
const Scope = Type.Union([Type.Literal('user'), Type.Literal('instance')], {
  description: "user: the owner's links and domains; instance (admins only): every event of the instance",
});
const SECRET = Type.String({
  minLength: 50,
  maxLength: 60,
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description: '`whsec_` and the base64 of 32 random bytes: the key of `webhook-signature`, shown this once',
});

export const WebhookSchema = Type.Object(
  {
    id: Id(),
    user_id: Id('Whose hook it is'),
    scope: Scope,
    url: Url,
    events: Events,
    domains: Type.Union([Domains, Type.Null()]),
    include_bots: Type.Boolean({ description: "Whether link.clicked is sent for bots' clicks too" }),
    description: Type.Union([Description, Type.Null()]),
    enabled: Type.Boolean({
      description: 'false: nothing is sent (disabled by its owner, or by Ferry: disabled_reason)',
    }),
    disabled_reason: Type.Union([Type.String({ maxLength: 256, pattern: NO_CONTROL_CHARACTERS }), Type.Null()], {
      description: 'Why Ferry disabled it (a 410, or three days of failures); null when enabled or disabled by hand',
    }),
    created_at: Instant(),
    updated_at: Instant(),
  },
  {
    $id: 'Webhook',
    additionalProperties: false,
    examples: [
      {
        id: 3,
        user_id: 7,
        scope: 'user',
        url: 'https://hooks.example.com/ferry',
        events: ['link.created', 'link.clicked'],
        domains: null,
        include_bots: false,
        description: 'CRM sync',
        enabled: true,
        disabled_reason: null,
        created_at: '2026-11-21T10:15:30.123Z',
        updated_at: '2026-11-21T10:15:30.123Z',
      },
    ],
  },
);
export type Webhook = Static<typeof WebhookSchema>;

export const WebhookCreatedSchema = Type.Object(
  { ...WebhookSchema.properties, secret: SECRET },
  { $id: 'WebhookCreated', additionalProperties: false },
);
export type WebhookCreated = Static<typeof WebhookCreatedSchema>;

export const WebhookCreateSchema = Type.Object(
  {
    url: Url,
    events: Events,
    domains: Type.Optional(Type.Union([Domains, Type.Null()])),
    include_bots: Type.Optional(Type.Boolean({ description: 'Default false' })),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    scope: Type.Optional(Scope),
  },
  {
    $id: 'WebhookCreate',
    additionalProperties: false,
    examples: [{ url: 'https://hooks.example.com/ferry', events: ['link.created'] }],
  },
);
export type WebhookCreate = Static<typeof WebhookCreateSchema>;

export const WebhookPatchSchema = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    domains: Type.Optional(Type.Union([Domains, Type.Null()])),
    include_bots: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    enabled: Type.Optional(
      Type.Boolean({ description: 'true re-enables a disabled hook (and clears disabled_reason)' }),
    ),
  },
  {
    $id: 'WebhookPatch',
    additionalProperties: false,
    description: 'JSON merge patch (RFC 7396) of the fields given',
    examples: [{ enabled: true }],
  },
);
export type WebhookPatch = Static<typeof WebhookPatchSchema>;

export const WebhookListSchema = Type.Object(
  { data: Type.Array(Type.Ref('Webhook'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'WebhookList', additionalProperties: false },
);

export const WebhookSecretSchema = Type.Object(
  { secret: SECRET },
  { $id: 'WebhookSecret', additionalProperties: false },
);

export const WebhookDeliverySchema = Type.Object(
  {
    id: Id('The attempt (redeliver it by this id)'),
    event_id: Type.String({ maxLength: 40, pattern: '^evt_[A-Za-z0-9_-]+$', description: 'webhook-id' }),
    event_type: Type.String({ maxLength: 60, pattern: '^[a-z_]+\\.[a-z_]+$' }),
    attempt: Type.Integer({ format: 'int32', minimum: 1, maximum: 10, description: 'Its number in its chain (1–10)' }),
    attempted_at: Type.Union([Instant(), Type.Null()], { description: 'null: not made yet (due at next_attempt_at)' }),
    status_code: Type.Union([Type.Integer({ format: 'int32', minimum: 100, maximum: 999 }), Type.Null()], {
      description: "The receiver's status; null: no answer (error says why) or not made yet",
    }),
    duration_ms: Type.Union([Count('How long the attempt took, in milliseconds'), Type.Null()]),
    error: Type.Union([Type.String({ maxLength: 512, pattern: NO_CONTROL_CHARACTERS }), Type.Null()], {
      description: 'Why it failed (a status that is not 2xx, no answer, WEBHOOK_TARGET_FORBIDDEN); null: delivered',
    }),
    response_body: Type.Union([Type.String({ maxLength: 1024, pattern: PRINTABLE_TEXT }), Type.Null()], {
      description: "The first 1,024 bytes of the receiver's answer (as UTF-8 text)",
    }),
    next_attempt_at: Type.Union([Instant(), Type.Null()], {
      description: 'When the next attempt is due (this one, if not made yet); null: none',
    }),
  },
  { $id: 'WebhookDelivery', additionalProperties: false },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

export const WebhookDeliveryListSchema = Type.Object(
  { data: Type.Array(Type.Ref('WebhookDelivery'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'WebhookDeliveryList', additionalProperties: false },
);

export const WEBHOOK_SORT_COLUMNS = { id: 'id', created_at: 'created_at' } as const;
export const WebhookListQuery = Type.Object({ sort: sortQuery(Object.keys(WEBHOOK_SORT_COLUMNS)), ...paginationQuery });
export type WebhookListQueryT = Static<typeof WebhookListQuery>;
export const DeliveryListQuery = Type.Object({ limit: paginationQuery.limit, cursor: paginationQuery.cursor });
export type DeliveryListQueryT = Static<typeof DeliveryListQuery>;

export const WebhookParams = Type.Object({ id: IdParam }, { additionalProperties: false });
export const DeliveryParams = Type.Object({ id: IdParam, delivery_id: IdParam }, { additionalProperties: false });

export const webhookSchemas = [
  WebhookSchema,
  WebhookCreatedSchema,
  WebhookCreateSchema,
  WebhookPatchSchema,
  WebhookListSchema,
  WebhookSecretSchema,
  WebhookDeliverySchema,
  WebhookDeliveryListSchema,
];
