import Type, { type Static } from 'typebox';
import { Count, Id, Instant as instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';
import { UserPathParams } from '../../lib/user-path.js';
import { MAX_URL_LENGTH } from './original-url.js';
import { ALIAS_PATTERN, domainQuery, LinkCodeParams, MAX_ALIAS_LENGTH, shortCode } from '../../lib/link-code.js';

/** v1 keeps the source document's snake_case names for links (SPEC §6, §9, §13). */
const Instant = instant();

export const MAX_TAGS = 10;
const TAG_PATTERN = '^[a-zA-Z0-9-]{1,32}$';
const Tag = Type.String({ pattern: TAG_PATTERN, minLength: 1, maxLength: 32, description: '1-32 of a-z 0-9 -; stored lower case' });
const TAGS_RULE = `At most ${MAX_TAGS} distinct tags, stored lower case in the order given (duplicates are merged)`;
const Tags = Type.Array(Tag, { maxItems: MAX_TAGS, description: TAGS_RULE });
const MaxVisits = Type.Union([Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()], {
  description: 'Human GET visits that are redirected; later visits answer 410 LINK_EXHAUSTED. Bots and HEAD do not count. null: no limit',
});
const ForwardQuery = Type.Boolean({ description: "Append the visit's query string to the target (utm_* parameters pass through)" });
const Password = Type.Union([Type.String({ format: 'password', minLength: 8, maxLength: 128 }), Type.Null()], {
  description: 'Write-only: visitors must give it (form or HTTP Basic) to be redirected. Stored as a salted scrypt hash. null: no password',
});
const OriginalUrl = Type.String({
  minLength: 1,
  pattern: NO_CONTROL_CHARACTERS,
  maxLength: MAX_URL_LENGTH,
  description:
    'Absolute http or https URL with a host; no credentials, whitespace or control characters; not a URL of this service. ' +
    'An internationalised URL is stored in its ASCII (punycode / percent-encoded) form.',
});
export const MAX_TITLE_LENGTH = 200;
const Title = Type.Union([Type.String({ maxLength: MAX_TITLE_LENGTH, pattern: NO_CONTROL_CHARACTERS }), Type.Null()], {
  description: `What the link is, for people (at most ${MAX_TITLE_LENGTH} characters); searched by q. null: none`,
});
export const MAX_ALIASES = 10;
const Alias = Type.String({ pattern: ALIAS_PATTERN, minLength: 1, maxLength: MAX_ALIAS_LENGTH, description: '1-64 of 0-9 a-z A-Z _ -; case-sensitive', examples: ['summer-sale'] });
const ALIASES_RULE = `At most ${MAX_ALIASES} further names of the link on its domain (SPEC §20): GET /{alias} redirects exactly like the code and counts for the link. ` +
  'Unique together with codes per domain (taken: 409 CONFLICT); names of top-level paths (api, docs, v3, healthz, ...) are reserved; duplicates are merged';
const Aliases = Type.Array(Alias, { maxItems: MAX_ALIASES, description: ALIASES_RULE, examples: [['summer-sale', 'Summer_2026']] });
const ExpiresAt = Type.Union([Instant, Type.Null()], { description: 'A future instant; null: never' });
export const MAX_DISABLED_REASON_LENGTH = 500;
const DisabledReason = (description: string) =>
  Type.Union([Type.String({ minLength: 1, maxLength: MAX_DISABLED_REASON_LENGTH, pattern: NO_CONTROL_CHARACTERS }), Type.Null()], { description });
const DomainName = Type.Union([Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/:@]+$' }), Type.Null()], {
  description: "A domain of this service that the caller owns (or any, for an admin), verified or not; null or omitted: the default domain. Only a verified domain serves visits",
});

export const LinkSchema = Type.Object(
  {
    id: Id(),
    short_code: shortCode('The short code (case-sensitive)'),
    short_url: Type.String({ format: 'uri', maxLength: 2400, description: "Absolute public URL of the short link, on the link's domain" }),
    domain: Type.Union([Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9.-]+$' }), Type.Null()], { description: 'The host name the link lives on; null: the default domain (the host of PUBLIC_BASE_URL). Codes are unique per domain' }),
    original_url: Type.String({ maxLength: MAX_URL_LENGTH, pattern: '^[hH][tT][tT][pP][sS]?://', description: 'The target, exactly as the redirect sends it in Location' }),
    user_id: Type.Union([Id(), Type.Null()], { description: 'Owner; null for an anonymous link or when the owner was deleted' }),
    expires_at: Type.Union([Instant, Type.Null()], { description: 'null: never expires' }),
    created_at: Instant,
    updated_at: instant('The last change (= created_at until the first)'),
    click_count: Count('Clicks recorded so far (written in batches, so it may lag a visit by about CLICK_FLUSH_MS)'),
    human_clicks: Count('Of click_count, the clicks by people: what the analytics count as clicks (human_clicks in the stats)'),
    bot_clicks: Count('Of click_count, the clicks by bots, crawlers, link unfurlers and scripts (bot_clicks in the stats)'),
    max_visits: MaxVisits,
    forward_query: ForwardQuery,
    tags: Type.Array(Type.String({ pattern: '^[a-z0-9-]{1,32}$', maxLength: 32 }), { maxItems: MAX_TAGS, description: 'Lower case, in the order given' }),
    has_password: Type.Boolean({ description: 'Read-only: whether visitors need a password' }),
    title: Title,
    aliases: Type.Array(Type.String({ pattern: ALIAS_PATTERN, maxLength: MAX_ALIAS_LENGTH }), {
      maxItems: MAX_ALIASES, description: "Further names of the link on its domain, in the order given: each redirects like the code (its short URL is the short_url's with the alias in place of the code)",
    }),
    disabled: Type.Boolean({ description: 'Disabled by an admin (SPEC §18): visits answer 410 LINK_DISABLED until an admin enables it again' }),
    disabled_reason: DisabledReason("Why an admin disabled the link, for its owner and admins (visitors are not shown it); null: not disabled, or no reason given"),
  },
  {
    $id: 'Link',
    additionalProperties: false,
    examples: [
      {
        id: 42, short_code: 'aZ3k9QxB', short_url: 'http://127.0.0.1:3000/aZ3k9QxB', domain: null, original_url: 'https://example.com/a/long/path?x=1',
        user_id: 7, expires_at: null, created_at: '2026-11-21T10:15:30.123Z', updated_at: '2026-11-21T10:15:30.123Z', click_count: 0, human_clicks: 0, bot_clicks: 0,
        max_visits: null, forward_query: false, tags: ['spring-campaign'], has_password: false, title: 'Spring campaign', aliases: ['spring-sale'],
        disabled: false, disabled_reason: null,
      },
    ],
  },
);
export type Link = Static<typeof LinkSchema>;

const readOnly = Type.Optional(Type.Unknown({ description: 'Read-only; ignored' }));
/** Read-only fields a client may echo back from a GET (SPEC §1). */
const echoed = {
  id: readOnly, short_url: readOnly, user_id: readOnly, created_at: readOnly, updated_at: readOnly, click_count: readOnly, human_clicks: readOnly, bot_clicks: readOnly, has_password: readOnly,
};

export const LinkCreateSchema = Type.Object(
  {
    original_url: OriginalUrl,
    short_code: Type.Optional(shortCode(
      'A custom code (1-8 of 0-9 a-z A-Z, case-sensitive). Names of top-level paths (api, docs, v3, healthz, ...) are reserved. Omitted: a random 8-character code.',
    )),
    expires_at: Type.Optional(ExpiresAt),
    max_visits: Type.Optional(MaxVisits),
    forward_query: Type.Optional(ForwardQuery),
    tags: Type.Optional(Tags),
    password: Type.Optional(Password),
    title: Type.Optional(Title),
    aliases: Type.Optional(Aliases),
    domain: Type.Optional(DomainName),
    ...echoed,
  },
  { $id: 'LinkCreate', additionalProperties: false, examples: [{ original_url: 'https://example.com/a/long/path?x=1', short_code: 'promo26', expires_at: '2027-01-01T00:00:00.000Z', tags: ['promo'], aliases: ['summer-sale'] }] },
);
export type LinkCreate = Static<typeof LinkCreateSchema>;

export const LinkPatchSchema = Type.Object(
  {
    original_url: Type.Optional(OriginalUrl),
    expires_at: Type.Optional(ExpiresAt),
    max_visits: Type.Optional(MaxVisits),
    forward_query: Type.Optional(ForwardQuery),
    // One schema with `type: [array, null]` rather than a union: a bad tag is then reported once, as tags.N.
    tags: Type.Optional(Type.Unsafe<string[] | null>({ type: ['array', 'null'], items: Tag, maxItems: MAX_TAGS, description: `${TAGS_RULE}; null or [] removes them` })),
    password: Type.Optional(Password),
    title: Type.Optional(Title),
    aliases: Type.Optional(Type.Unsafe<string[] | null>({
      type: ['array', 'null'], items: Alias, maxItems: MAX_ALIASES, description: `Replaces the set: ${ALIASES_RULE}. A removed alias is retired for good (it never points at another link; this link may take it back); null or [] removes them all`,
      examples: [['summer-sale']],
    })),
    disabled: Type.Optional(Type.Boolean({
      description: 'Admins only: true disables the link (visits answer 410 LINK_DISABLED), false enables it again. Anyone else: accepted only with the current value (otherwise 403)',
    })),
    disabled_reason: Type.Optional(DisabledReason('Admins only: why the link is disabled, with disabled: true or on a disabled link; null: no reason')),
    short_code: Type.Optional(shortCode('Cannot change: accepted only with the current value')),
    domain: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/:@]+$' }), Type.Null()], {
      description: 'Moves the link to another domain (null: the default one) with the same code; its code on the old domain is retired',
    })),
    ...echoed,
  },
  {
    additionalProperties: false,
    description: 'JSON merge patch (RFC 7396): only the sent fields change; null clears expires_at, max_visits, tags, password, title and aliases',
    examples: [{ original_url: 'https://example.com/fixed-typo', max_visits: 100, password: null }],
  },
);
export type LinkPatch = Static<typeof LinkPatchSchema>;

export { domainQuery, LinkCodeParams };

export const LinkListSchema = Type.Object(
  { data: Type.Array(Type.Ref('Link'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'LinkList', additionalProperties: false },
);

/** Public sort field → column. `id` stays the default (the order before sort fields existed). */
export const LINK_SORT_COLUMNS = { id: 'id', created_at: 'created_at', click_count: 'click_count', expires_at: 'expires_at' } as const;
/** Sorted as if null were the latest instant: a link that never expires sorts after every other. */
export const NULL_IS_LAST: readonly string[] = ['expires_at'];

export const linkListFilters = {
  domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/:@]+$', description: "Only links on this domain (the default domain's host name for links without one)" })),
  tag: Type.Optional(Type.String({ pattern: TAG_PATTERN, minLength: 1, maxLength: 32, description: 'Only links with this tag (any case)' })),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: NO_CONTROL_CHARACTERS, description: 'Only links whose original_url, short_code, title or one of whose aliases contains this text (ignoring ASCII case; % and _ match themselves)' })),
};

export const LinkListQuery = Type.Object({ sort: sortQuery(Object.keys(LINK_SORT_COLUMNS)), ...linkListFilters, ...paginationQuery });
export type LinkListQueryT = Static<typeof LinkListQuery>;

/** A link's state for the admin list's `status` filter. */
export type LinkStatus = 'active' | 'expired' | 'disabled';

/** The admin list's filters beyond a user's (SPEC §18): whose links, and in which state. */
export const allLinksFilters = {
  user_id: Type.Optional(Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Only this user's links" })),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('disabled')], {
    description: 'active: neither disabled nor expired; expired: past expires_at (the sweep removes such a link within a minute, leaving its code answering 410); disabled: disabled by an admin',
  })),
};

export const AllLinksQuery = Type.Object({ sort: sortQuery(Object.keys(LINK_SORT_COLUMNS)), ...linkListFilters, ...allLinksFilters, ...paginationQuery });
export type AllLinksQueryT = Static<typeof AllLinksQuery>;

export const UserLinksParams = UserPathParams;

/** Registered as OpenAPI components. */
export const linkSchemas = [LinkSchema, LinkListSchema, LinkCreateSchema];
