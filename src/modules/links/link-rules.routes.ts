/** SPEC §21: GET and PUT /links/{code}/rules, and the dry run POST /links/{code}/rules/evaluate. */
import Type from 'typebox';
import { errorResponses, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { renameKeys, renameSchemaProperties, toCamel, toSnake } from '../../lib/case-mapping.js';
import { securityFor } from '../../plugins/auth.js';
import type { RuleEvaluationInput } from './link-rules.js';
import type { LinkRoutesContext, LinksApp } from './links.routes-context.js';
import { domainQuery, LinkCodeParams } from './links.schemas.js';
import { CONDITION_TYPES, ID_PATTERN, RulesInput, type RuleInput } from './rules/index.js';

const DomainQuery = Type.Object(domainQuery);
const ETAG = 'the link\'s ETag, "link-{id}-v{version}": any change of the link moves it; If-Match on PUT';
const etagHeader = { ETag: { type: 'string', maxLength: 64, pattern: '^"link-[0-9]+-v[0-9]+"$', description: ETAG } };

const RulesBody = Type.Object({ rules: RulesInput }, { additionalProperties: false });

const Text = (maxLength: number, description: string) =>
  Type.Optional(Type.String({ maxLength, pattern: NO_CONTROL_CHARACTERS, description }));
const EvaluationBody = Type.Object(
  {
    user_agent: Text(512, "The visitor's User-Agent (omitted: none, which reads as a bot)"),
    ip: Text(45, 'The client address'),
    country: Text(2, 'ISO 3166 alpha-2, as GEOIP_DATABASE or COUNTRY_HEADER would give it'),
    accept_language: Text(1024, 'An Accept-Language header'),
    query: Type.Optional(
      Type.Record(
        Type.String({ maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
        Type.Union([
          Type.String({ maxLength: 1024, pattern: NO_CONTROL_CHARACTERS }),
          Type.Array(Type.String({ maxLength: 1024, pattern: NO_CONTROL_CHARACTERS }), { maxItems: 50 }),
        ]),
        { maxProperties: 50, description: "The visit's query parameters: name -> value or list of values" },
      ),
    ),
    referrer: Text(2048, 'The Referer header'),
    at: Text(64, 'The moment of the visit (ISO 8601; default: now)'),
  },
  { additionalProperties: false },
);
const TRACE_ID = Type.String({ maxLength: 16, pattern: ID_PATTERN });
const EvaluationResult = Type.Object(
  {
    rule_id: Type.Union([TRACE_ID, Type.Null()], { description: 'The rule that wins; null: none, original_url' }),
    variant_id: Type.Union([TRACE_ID, Type.Null()], {
      description: "The split's variant drawn as for a first visit (a bot: the first); null: no split",
    }),
    url: Type.String({
      maxLength: 2048,
      pattern: NO_CONTROL_CHARACTERS,
      description: 'Where the visit would go (before forward_query)',
    }),
    trace: Type.Array(
      Type.Object(
        {
          rule_id: TRACE_ID,
          matched: Type.Boolean({ description: 'Enabled and every condition matched' }),
          conditions: Type.Array(
            Type.Object(
              {
                type: Type.Unsafe<string>({ type: 'string', enum: [...CONDITION_TYPES] }),
                matched: Type.Boolean(),
              },
              { additionalProperties: false },
            ),
            { maxItems: 10 },
          ),
        },
        { additionalProperties: false },
      ),
      { maxItems: 20, description: 'Every rule in order, every condition evaluated' },
    ),
  },
  { additionalProperties: false },
);

export function registerLinkRulesRoutes(app: LinksApp, context: LinkRoutesContext): void {
  registerRulesRead(app, context);
  registerRulesReplace(app, context);
  registerRulesDryRun(app, context);
}

function registerRulesRead(app: LinksApp, { tags, opts: { links } }: LinkRoutesContext): void {
  app.get(
    '/links/:code/rules',
    {
      onRequest: app.access('user', 'links:read'),
      schema: {
        operationId: 'getLinkRules',
        tags,
        security: securityFor('user', 'links:read'),
        summary: "A link's routing rules (owner or admin)",
        params: LinkCodeParams,
        querystring: DomainQuery,
        response: {
          200: { ...Type.Ref('LinkRules'), description: 'The rules, in order', headers: etagHeader },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const { rules, etag } = await links.getRules(request.params.code, request.caller, request.query.domain);
      return reply.header('etag', etag).send({ rules });
    },
  );
}

function registerRulesReplace(app: LinksApp, { tags, opts: { links } }: LinkRoutesContext): void {
  app.put(
    '/links/:code/rules',
    {
      onRequest: app.access('user', 'links:write'),
      schema: {
        operationId: 'putLinkRules',
        tags,
        security: securityFor('user', 'links:write'),
        summary:
          "Replace a link's routing rules (owner or admin): the redirect follows at once here and within a second on every instance",
        description:
          'Ids sent back from a GET are kept; any other rule or variant gets a new one. A bad rule: 400 VALIDATION_ERROR, one detail per field. ' +
          'A target on a blocked host: 422 DESTINATION_BLOCKED. If-Match with a stale ETag: 412.',
        params: LinkCodeParams,
        querystring: DomainQuery,
        body: RulesBody,
        response: {
          200: { ...Type.Ref('LinkRules'), description: 'The stored rules, ids assigned', headers: etagHeader },
          ...errorResponses(400, 401, 403, 404, 412, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const { rules, etag } = await links.putRules(
        request.params.code,
        (request.body as { rules: RuleInput[] }).rules,
        {
          caller: request.caller,
          ifMatch: request.headers['if-match'],
          domain: request.query.domain,
        },
      );
      return reply.header('etag', etag).send({ rules });
    },
  );
}

function registerRulesDryRun(app: LinksApp, { tags, opts: { links, version } }: LinkRoutesContext): void {
  const v2 = version === 2;
  app.post(
    '/links/:code/rules/evaluate',
    {
      onRequest: app.access('user', 'links:read'),
      schema: {
        operationId: 'evaluateLinkRules',
        tags,
        security: securityFor('user', 'links:read'),
        summary:
          "Try a link's rules on a made-up visit (owner or admin): the rule, the variant and why; records nothing",
        params: LinkCodeParams,
        querystring: DomainQuery,
        body: v2 ? renameSchemaProperties(EvaluationBody, toCamel) : EvaluationBody,
        response: {
          200: {
            ...(v2 ? renameSchemaProperties(EvaluationResult, toCamel) : EvaluationResult),
            description: 'The outcome and its trace',
          },
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      },
    },
    async (request) => {
      const body = request.body as Record<string, unknown>;
      // Only the body's own names are v2's: the query's parameter names are the visit's, as sent.
      const input = (
        v2 ? Object.fromEntries(Object.entries(body).map(([k, v]) => [toSnake(k), v])) : body
      ) as RuleEvaluationInput;
      const result = await links.evaluateRules(request.params.code, input, request.caller, request.query.domain);
      return v2 ? renameKeys(result, toCamel) : result;
    },
  );
}
