import Type from 'typebox';

export const HealthSchema = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'Health', additionalProperties: false, description: 'The process is alive and its event loop answers', examples: [{ status: 'ok' }] },
);

export const ReadinessSchema = Type.Object(
  {
    status: Type.Literal('ok'),
    checks: Type.Record(Type.String(), Type.Literal('ok'), { description: 'Every dependency checked, by name (database; redis when used)' }),
  },
  {
    $id: 'Readiness',
    additionalProperties: false,
    description: 'Every dependency answered. A failing check answers 503 with one detail per failing check instead.',
    examples: [{ status: 'ok', checks: { database: 'ok' } }],
  },
);

export const healthSchemas = [HealthSchema, ReadinessSchema];
