import Type from 'typebox';

export const HealthSchema = Type.Object(
  { status: Type.Literal('ok') },
  {
    $id: 'Health',
    additionalProperties: false,
    description: 'The process is alive and its event loop answers',
    examples: [{ status: 'ok' }],
  },
);

export const ReadinessSchema = Type.Object(
  {
    status: Type.Literal('ok'),
    checks: Type.Record(Type.String(), Type.Literal('ok'), {
      description:
        'Every dependency checked, by name: database, storage (writes can land: DATA_DIR has room and takes writes on the embedded engine, and no write failed for lack of space in the last 10 s), redis when used',
    }),
    click_stream: Type.Optional(
      Type.Object(
        {
          backlog: Type.Integer({
            format: 'int64',
            minimum: 0,
            maximum: Number.MAX_SAFE_INTEGER,
            description: 'Clicks in the Redis click stream not yet written (all instances)',
          }),
          consumers: Type.Integer({
            format: 'int32',
            minimum: 0,
            maximum: 1_000_000,
            description:
              'Consumers of the click stream seen alive in the last 30 s (API instances and `npm run worker`)',
          }),
        },
        {
          additionalProperties: false,
          description: 'The scale-out setup (REDIS_URL) only: how far click counting is behind, and who counts',
        },
      ),
    ),
    events_bus: Type.Optional(
      Type.Union([Type.Literal('up'), Type.Literal('down')], {
        description:
          'With EVENTS_URL only: whether this instance is connected to the message bus. `down` delays publishing (the events wait in the database) but never a request, so the instance stays ready',
      }),
    ),
  },
  {
    $id: 'Readiness',
    additionalProperties: false,
    description: 'Every dependency answered. A failing check answers 503 with one detail per failing check instead.',
    examples: [
      { status: 'ok', checks: { database: 'ok', storage: 'ok' } },
      {
        status: 'ok',
        checks: { database: 'ok', storage: 'ok', redis: 'ok' },
        click_stream: { backlog: 12, consumers: 2 },
      },
      { status: 'ok', checks: { database: 'ok', storage: 'ok' }, events_bus: 'down' },
    ],
  },
);

export const healthSchemas = [HealthSchema, ReadinessSchema];
