/**
 * The fields of a link as requests and responses share them (links.schemas.ts): each with its rule, its bounds
 * and the words the OpenAPI document shows.
 */
import Type from 'typebox';
import { Instant as instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { MAX_URL_LENGTH } from './original-url.js';
import { ALIAS_PATTERN, MAX_ALIAS_LENGTH } from '../../lib/link-code.js';

/** v1 keeps the source document's snake_case names for links (SPEC §6, §9, §13). */
export const Instant = instant();

export const MAX_TAGS = 10;
export const TAG_PATTERN = '^[a-zA-Z0-9-]{1,32}$';
export const Tag = Type.String({
  pattern: TAG_PATTERN,
  minLength: 1,
  maxLength: 32,
  description: '1-32 of a-z 0-9 -; stored lower case',
});
export const TAGS_RULE = `At most ${MAX_TAGS} distinct tags, stored lower case in the order given (duplicates are merged)`;
export const Tags = Type.Array(Tag, { maxItems: MAX_TAGS, description: TAGS_RULE });
export const MaxVisits = Type.Union(
  [Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()],
  {
    description:
      'Human GET visits that are redirected; later visits answer 410 LINK_EXHAUSTED. Bots and HEAD do not count. null: no limit',
  },
);
export const ForwardQuery = Type.Boolean({
  description: "Append the visit's query string to the target (utm_* parameters pass through)",
});
export const Password = Type.Union([Type.String({ format: 'password', minLength: 8, maxLength: 128 }), Type.Null()], {
  description:
    'Write-only: visitors must give it (form or HTTP Basic) to be redirected. Stored as a salted scrypt hash. null: no password',
});
export const OriginalUrl = Type.String({
  minLength: 1,
  pattern: NO_CONTROL_CHARACTERS,
  maxLength: MAX_URL_LENGTH,
  description:
    'Absolute http or https URL with a host; no credentials, whitespace or control characters; not a URL of this service. ' +
    'An internationalised URL is stored in its ASCII (punycode / percent-encoded) form.',
});
export const FallbackUrl = Type.Union(
  [
    Type.String({
      minLength: 1,
      pattern: NO_CONTROL_CHARACTERS,
      maxLength: MAX_URL_LENGTH,
      description:
        'Checked as original_url is (absolute http or https, no credentials, not a URL of this service, no blocked host)',
    }),
    Type.Null(),
  ],
  {
    description:
      "SPEC §24: where the link's visits go while its health is broken (before its domain's broken_redirect); null: none",
  },
);
export const MAX_TITLE_LENGTH = 200;
export const Title = Type.Union(
  [Type.String({ maxLength: MAX_TITLE_LENGTH, pattern: NO_CONTROL_CHARACTERS }), Type.Null()],
  {
    description: `What the link is, for people (at most ${MAX_TITLE_LENGTH} characters); searched by q. null: none`,
  },
);
export const MAX_ALIASES = 10;
export const Alias = Type.String({
  pattern: ALIAS_PATTERN,
  minLength: 1,
  maxLength: MAX_ALIAS_LENGTH,
  description: '1-64 of 0-9 a-z A-Z _ -; case-sensitive',
  examples: ['summer-sale'],
});
export const ALIASES_RULE =
  `At most ${MAX_ALIASES} further names of the link on its domain (SPEC §20): GET /{alias} redirects exactly like the code and counts for the link. ` +
  'Unique together with codes per domain (taken: 409 CONFLICT); names of top-level paths (api, docs, v3, healthz, ...) are reserved; duplicates are merged';
export const Aliases = Type.Array(Alias, {
  maxItems: MAX_ALIASES,
  description: ALIASES_RULE,
  examples: [['summer-sale', 'Summer_2026']],
});
export const ExpiresAt = Type.Union([Instant, Type.Null()], { description: 'A future instant; null: never' });
export const MAX_DISABLED_REASON_LENGTH = 500;
export const DisabledReason = (description: string) =>
  Type.Union(
    [Type.String({ minLength: 1, maxLength: MAX_DISABLED_REASON_LENGTH, pattern: NO_CONTROL_CHARACTERS }), Type.Null()],
    { description },
  );
export const DomainName = Type.Union(
  [Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/:@]+$' }), Type.Null()],
  {
    description:
      'A domain of this service that the caller owns (or any, for an admin), verified or not; null or omitted: the default domain. Only a verified domain serves visits',
  },
);
