/**
 * A link's routing rules (SPEC §21) as the API shows them and the database stores them (links.rules, JSON):
 * the shapes, their limits, and the words of the OpenAPI document. v2 shows the same shapes (every property
 * name here is one word already).
 */
import Type, { type Static } from 'typebox';
import { NO_CONTROL_CHARACTERS } from '../../../lib/common.schemas.js';
import { MAX_URL_LENGTH } from '../original-url.js';

export const MAX_RULES = 20;
export const MAX_CONDITIONS = 10;
export const MAX_VALUES = 50;
export const MIN_VARIANTS = 2;
export const MAX_VARIANTS = 10;
export const MAX_VALUE_LENGTH = 200;
export const MAX_NAME_LENGTH = 100;
export const MAX_KEY_LENGTH = 100;
export const ID_PATTERN = '^[A-Za-z0-9]{1,16}$';

export const DEVICES = [
  'ios',
  'android',
  'ipados',
  'mobile',
  'tablet',
  'desktop',
  'windows',
  'macos',
  'linux',
  'chromeos',
] as const;
export const BROWSERS = ['chrome', 'firefox', 'safari', 'edge', 'opera', 'samsung'] as const;
export const CONDITION_TYPES = [
  'device',
  'browser',
  'language',
  'country',
  'ip',
  'query',
  'referrer_host',
  'after',
  'before',
] as const;
export const QUERY_MATCHES = ['equals', 'present', 'absent'] as const;

export type Device = (typeof DEVICES)[number];
export type Browser = (typeof BROWSERS)[number];
export type ConditionType = (typeof CONDITION_TYPES)[number];
export type QueryMatch = (typeof QUERY_MATCHES)[number];

/** A rule as stored and shown: ids assigned, defaults filled in. */
export interface Condition {
  type: ConditionType;
  /** query only */
  key?: string;
  /** query only (always written for it) */
  match?: QueryMatch;
  values: string[];
}
export interface Variant {
  id: string;
  url: string;
  weight: number;
}
export type RuleTarget = { url: string } | { split: Variant[]; sticky: boolean };
export interface Rule {
  id: string;
  name?: string;
  enabled: boolean;
  conditions: Condition[];
  target: RuleTarget;
}

const enumOf = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });

const RuleIdText = (description: string) =>
  Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: 16, description });
const TargetUrl = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  pattern: NO_CONTROL_CHARACTERS,
  description: 'Checked exactly as original_url is: an absolute http or https URL, not this service, no blocked host',
});

const CONDITION_RULE =
  'device: ' +
  DEVICES.join(', ') +
  '; browser: ' +
  BROWSERS.join(', ') +
  '; language: tags like en or pt-BR (an Accept-Language entry with q > 0 matches by primary tag, and by region too when the value has one); country: ISO 3166 alpha-2 (GEOIP_DATABASE or COUNTRY_HEADER; never matches without them); ip: addresses or CIDRs, v4 and v6; query: `key` and `match` (equals: one of `values`; present, absent: `values` empty or omitted); referrer_host: a host, matching itself and its subdomains; after, before: one ISO 8601 instant. The values are alternatives (OR)';

const conditionProperties = {
  type: enumOf(CONDITION_TYPES, 'What of the visit the condition looks at'),
  key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_KEY_LENGTH,
      pattern: NO_CONTROL_CHARACTERS,
      description: 'query only: the query parameter',
    }),
  ),
  match: Type.Optional(enumOf(QUERY_MATCHES, 'query only: equals (default), present or absent')),
};
const ConditionValues = Type.Array(Type.String({ maxLength: MAX_VALUE_LENGTH, pattern: NO_CONTROL_CHARACTERS }), {
  maxItems: MAX_VALUES,
  description: `At most ${MAX_VALUES}; any one of them matches (OR)`,
});

export const ConditionInputSchema = Type.Object(
  { ...conditionProperties, values: Type.Optional(ConditionValues) },
  { additionalProperties: false, description: CONDITION_RULE },
);
export const ConditionSchema = Type.Object(
  { ...conditionProperties, values: ConditionValues },
  { additionalProperties: false, description: CONDITION_RULE },
);

const Weight = Type.Integer({
  minimum: 1,
  maximum: 99,
  format: 'int32',
  description: 'A share in percent; the weights sum to 100',
});
const Sticky = Type.Boolean({
  description: 'The visitor keeps the variant through the cookie ferry_v_<link id> (default true)',
});
const VARIANTS_RULE = `${MIN_VARIANTS}-${MAX_VARIANTS} variants, integer weights 1-99 summing to 100`;

export const RuleInputSchema = Type.Object(
  {
    id: Type.Optional(
      RuleIdText("Ferry's id of the rule, when sent back from a GET (kept); any other is replaced by a new one"),
    ),
    name: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH, pattern: NO_CONTROL_CHARACTERS })),
    enabled: Type.Optional(Type.Boolean({ description: 'Default true; a disabled rule is skipped' })),
    conditions: Type.Array(ConditionInputSchema, {
      minItems: 1,
      maxItems: MAX_CONDITIONS,
      description: `1-${MAX_CONDITIONS}; all must match (AND)`,
    }),
    target: Type.Object(
      {
        url: Type.Optional(TargetUrl),
        split: Type.Optional(
          Type.Array(
            Type.Object(
              {
                id: Type.Optional(RuleIdText("Ferry's id of the variant, when sent back (kept)")),
                url: TargetUrl,
                weight: Weight,
              },
              { additionalProperties: false },
            ),
            { minItems: MIN_VARIANTS, maxItems: MAX_VARIANTS, description: VARIANTS_RULE },
          ),
        ),
        sticky: Type.Optional(Sticky),
      },
      { additionalProperties: false, description: 'Either `url`, or `split` (with `sticky`)' },
    ),
  },
  { additionalProperties: false },
);
export type RuleInput = Static<typeof RuleInputSchema>;

export const RULES_RULE = `At most ${MAX_RULES} rules; the first enabled rule that matches a visit chooses its target, none: original_url`;
export const RulesInput = Type.Array(RuleInputSchema, { maxItems: MAX_RULES, description: RULES_RULE });

export const RuleSchema = Type.Object(
  {
    id: RuleIdText('Assigned by Ferry; stable'),
    name: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH, pattern: NO_CONTROL_CHARACTERS })),
    enabled: Type.Boolean(),
    conditions: Type.Array(ConditionSchema, { minItems: 1, maxItems: MAX_CONDITIONS }),
    target: Type.Union([
      Type.Object({ url: TargetUrl }, { additionalProperties: false }),
      Type.Object(
        {
          split: Type.Array(
            Type.Object(
              { id: RuleIdText('Assigned by Ferry; stable'), url: TargetUrl, weight: Weight },
              { additionalProperties: false },
            ),
            { minItems: MIN_VARIANTS, maxItems: MAX_VARIANTS },
          ),
          sticky: Sticky,
        },
        { additionalProperties: false },
      ),
    ]),
  },
  { $id: 'LinkRule', additionalProperties: false },
);

export const RuleListSchema = Type.Object(
  { rules: Type.Array(Type.Ref('LinkRule'), { maxItems: MAX_RULES }) },
  { $id: 'LinkRules', additionalProperties: false },
);
