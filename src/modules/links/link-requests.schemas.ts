/** What a client sends to create a link (POST) and to change one (PATCH, a JSON merge patch), in v1's names. */
import Type, { type Static } from 'typebox';
import { shortCode } from '../../lib/link-code.js';
import {
  Alias,
  Aliases,
  ALIASES_RULE,
  DisabledReason,
  DomainName,
  ExpiresAt,
  FallbackUrl,
  ForwardQuery,
  MAX_ALIASES,
  MAX_TAGS,
  MaxVisits,
  OriginalUrl,
  Password,
  Tag,
  Tags,
  TAGS_RULE,
  Title,
} from './link-fields.schemas.js';
import { MAX_RULES, RuleInputSchema, RULES_RULE, RulesInput } from './rules/index.js';
import { PreviewInput } from './link-preview.js';

const readOnly = Type.Optional(Type.Unknown({ description: 'Read-only; ignored' }));
/** Read-only fields a client may echo back from a GET (SPEC §1). */
const echoed = {
  id: readOnly,
  short_url: readOnly,
  user_id: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  click_count: readOnly,
  human_clicks: readOnly,
  bot_clicks: readOnly,
  has_password: readOnly,
  health: readOnly,
};

export const LinkCreateSchema = Type.Object(
  {
    original_url: OriginalUrl,
    short_code: Type.Optional(
      shortCode(
        'A custom code (1-8 of 0-9 a-z A-Z, case-sensitive). Names of top-level paths (api, docs, v3, healthz, ...) are reserved. Omitted: a random 8-character code.',
      ),
    ),
    expires_at: Type.Optional(ExpiresAt),
    max_visits: Type.Optional(MaxVisits),
    forward_query: Type.Optional(ForwardQuery),
    tags: Type.Optional(Tags),
    password: Type.Optional(Password),
    title: Type.Optional(Title),
    aliases: Type.Optional(Aliases),
    domain: Type.Optional(DomainName),
    rules: Type.Optional(RulesInput),
    preview: Type.Optional(PreviewInput),
    fallback_url: Type.Optional(FallbackUrl),
    ...echoed,
  },
  {
    $id: 'LinkCreate',
    additionalProperties: false,
    examples: [
      {
        original_url: 'https://example.com/a/long/path?x=1',
        short_code: 'promo26',
        expires_at: '2027-01-01T00:00:00.000Z',
        tags: ['promo'],
        aliases: ['summer-sale'],
      },
    ],
  },
);
export type LinkCreate = Static<typeof LinkCreateSchema>;

export const LinkPatchSchema = Type.Object(
  {
    original_url: Type.Optional(OriginalUrl),
    expires_at: Type.Optional(ExpiresAt),
    max_visits: Type.Optional(MaxVisits),
    forward_query: Type.Optional(ForwardQuery),
    // One schema with `type: [array, null]` rather than a union: a bad tag is then reported once, as tags.N.
    tags: Type.Optional(
      Type.Unsafe<string[] | null>({
        type: ['array', 'null'],
        items: Tag,
        maxItems: MAX_TAGS,
        description: `${TAGS_RULE}; null or [] removes them`,
      }),
    ),
    password: Type.Optional(Password),
    title: Type.Optional(Title),
    aliases: Type.Optional(
      Type.Unsafe<string[] | null>({
        type: ['array', 'null'],
        items: Alias,
        maxItems: MAX_ALIASES,
        description: `Replaces the set: ${ALIASES_RULE}. A removed alias is retired for good (it never points at another link; this link may take it back); null or [] removes them all`,
        examples: [['summer-sale']],
      }),
    ),
    disabled: Type.Optional(
      Type.Boolean({
        description:
          'Admins only: true disables the link (visits answer 410 LINK_DISABLED), false enables it again. Anyone else: accepted only with the current value (otherwise 403)',
      }),
    ),
    disabled_reason: Type.Optional(
      DisabledReason(
        'Admins only: why the link is disabled, with disabled: true or on a disabled link; null: no reason',
      ),
    ),
    rules: Type.Optional(
      Type.Unsafe<Static<typeof RulesInput> | null>({
        type: ['array', 'null'],
        items: RuleInputSchema,
        maxItems: MAX_RULES,
        description: `Replaces the list (as PUT /links/{code}/rules does): ${RULES_RULE}; null or [] removes them`,
      }),
    ),
    preview: Type.Optional(PreviewInput),
    fallback_url: Type.Optional(FallbackUrl),
    short_code: Type.Optional(shortCode('Cannot change: accepted only with the current value')),
    domain: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/:@]+$' }), Type.Null()], {
        description:
          'Moves the link to another domain (null: the default one) with the same code; its code on the old domain is retired',
      }),
    ),
    ...echoed,
  },
  {
    additionalProperties: false,
    description:
      'JSON merge patch (RFC 7396): only the sent fields change; null clears expires_at, max_visits, tags, password, title, aliases, rules, preview and fallback_url',
    examples: [{ original_url: 'https://example.com/fixed-typo', max_visits: 100, password: null }],
  },
);
export type LinkPatch = Static<typeof LinkPatchSchema>;
