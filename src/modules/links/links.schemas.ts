/**
 * The link resource as v1 shows it, and its collections' queries; the fields it shares with the requests are in
 * link-fields.schemas.ts, the request bodies in link-requests.schemas.ts.
 */
import Type, { type Static } from 'typebox';
import { Count, Id, Instant as instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';
import { UserPathParams } from '../../lib/user-path.js';
import { MAX_URL_LENGTH } from './original-url.js';
import { ALIAS_PATTERN, domainQuery, LinkCodeParams, MAX_ALIAS_LENGTH, shortCode } from '../../lib/link-code.js';
import {
  DisabledReason,
  ForwardQuery,
  Instant,
  MAX_ALIASES,
  MAX_TAGS,
  MaxVisits,
  TAG_PATTERN,
  Title,
} from './link-fields.schemas.js';
import { LinkCreateSchema } from './link-requests.schemas.js';
import { RuleListSchema, RuleSchema } from './rules/index.js';
import { PreviewOutput } from './link-preview.js';

export { MAX_ALIASES, MAX_DISABLED_REASON_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH } from './link-fields.schemas.js';
export { LinkCreateSchema, LinkPatchSchema, type LinkCreate, type LinkPatch } from './link-requests.schemas.js';

/** SPEC §24: what the destination checks found (docs/link-checks.md). */
export const HEALTH_STATUSES = ['ok', 'broken', 'unknown'] as const;
export const LinkHealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('broken'), Type.Literal('unknown')], {
      description:
        'ok: the last check succeeded; broken: the last two checks failed (DNS, TLS, timeout, 404, 410, 5xx); unknown: not checked yet (new or changed destination), or not checkable (a private address)',
    }),
    checked_at: Type.Union([Instant, Type.Null()], { description: 'The last check; null: none yet' }),
    http_status: Type.Union([Type.Integer({ format: 'int32', minimum: 100, maximum: 999 }), Type.Null()], {
      description: "The last check's final HTTP status (after redirects); null: no answer, or not checked",
    }),
    error: Type.Union([Type.String({ maxLength: 200, pattern: NO_CONTROL_CHARACTERS }), Type.Null()], {
      description: 'What the last check found wrong, or why the destination is not checked; null: nothing',
    }),
    since: Type.Union([Instant, Type.Null()], {
      description: 'Since when the status holds; null: unknown since creation or the last change of destination',
    }),
  },
  { additionalProperties: false, description: "SPEC §24: the destination checks' verdict" },
);
export type LinkHealth = Static<typeof LinkHealthSchema>;

export const LinkSchema = Type.Object(
  {
    id: Id(),
    short_code: shortCode('The short code (case-sensitive)'),
    short_url: Type.String({
      format: 'uri',
      maxLength: 2400,
      description: "Absolute public URL of the short link, on the link's domain",
    }),
    domain: Type.Union([Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9.-]+$' }), Type.Null()], {
      description:
        'The host name the link lives on; null: the default domain (the host of PUBLIC_BASE_URL). Codes are unique per domain',
    }),
    original_url: Type.String({
      maxLength: MAX_URL_LENGTH,
      pattern: '^[hH][tT][tT][pP][sS]?://',
      description: 'The target, exactly as the redirect sends it in Location',
    }),
    user_id: Type.Union([Id(), Type.Null()], {
      description: 'Owner; null for an anonymous link or when the owner was deleted',
    }),
    expires_at: Type.Union([Instant, Type.Null()], { description: 'null: never expires' }),
    created_at: Instant,
    updated_at: instant('The last change (= created_at until the first)'),
    click_count: Count('Clicks recorded so far (written in batches, so it may lag a visit by about CLICK_FLUSH_MS)'),
    human_clicks: Count(
      'Of click_count, the clicks by people: what the analytics count as clicks (human_clicks in the stats)',
    ),
    bot_clicks: Count(
      'Of click_count, the clicks by bots, crawlers, link unfurlers and scripts (bot_clicks in the stats)',
    ),
    max_visits: MaxVisits,
    forward_query: ForwardQuery,
    tags: Type.Array(Type.String({ pattern: '^[a-z0-9-]{1,32}$', maxLength: 32 }), {
      maxItems: MAX_TAGS,
      description: 'Lower case, in the order given',
    }),
    has_password: Type.Boolean({ description: 'Read-only: whether visitors need a password' }),
    title: Title,
    aliases: Type.Array(Type.String({ pattern: ALIAS_PATTERN, maxLength: MAX_ALIAS_LENGTH }), {
      maxItems: MAX_ALIASES,
      description:
        "Further names of the link on its domain, in the order given: each redirects like the code (its short URL is the short_url's with the alias in place of the code)",
    }),
    disabled: Type.Boolean({
      description: 'Disabled by an admin (SPEC §18): visits answer 410 LINK_DISABLED until an admin enables it again',
    }),
    disabled_reason: DisabledReason(
      'Why an admin disabled the link, for its owner and admins (visitors are not shown it); null: not disabled, or no reason given',
    ),
    preview: PreviewOutput,
    fallback_url: Type.Union(
      [Type.String({ maxLength: MAX_URL_LENGTH, pattern: '^[hH][tT][tT][pP][sS]?://' }), Type.Null()],
      {
        description:
          "SPEC §24: where visits go while the link is broken (before its domain's broken_redirect); null: none",
      },
    ),
    health: LinkHealthSchema,
  },
  {
    $id: 'Link',
    additionalProperties: false,
    examples: [
      {
        id: 42,
        short_code: 'aZ3k9QxB',
        short_url: 'http://127.0.0.1:3000/aZ3k9QxB',
        domain: null,
        original_url: 'https://example.com/a/long/path?x=1',
        user_id: 7,
        expires_at: null,
        created_at: '2026-11-21T10:15:30.123Z',
        updated_at: '2026-11-21T10:15:30.123Z',
        click_count: 0,
        human_clicks: 0,
        bot_clicks: 0,
        max_visits: null,
        forward_query: false,
        tags: ['spring-campaign'],
        has_password: false,
        title: 'Spring campaign',
        aliases: ['spring-sale'],
        disabled: false,
        disabled_reason: null,
        preview: null,
        fallback_url: null,
        health: {
          status: 'ok',
          checked_at: '2026-11-22T03:12:00.000Z',
          http_status: 200,
          error: null,
          since: '2026-11-21T10:15:31.000Z',
        },
      },
    ],
  },
);
export type Link = Static<typeof LinkSchema>;

export { domainQuery, LinkCodeParams };

export const LinkListSchema = Type.Object(
  { data: Type.Array(Type.Ref('Link'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'LinkList', additionalProperties: false },
);

/** Public sort field → column. `id` stays the default (the order before sort fields existed). */
export const LINK_SORT_COLUMNS = {
  id: 'id',
  created_at: 'created_at',
  click_count: 'click_count',
  expires_at: 'expires_at',
} as const;
/** Sorted as if null were the latest instant: a link that never expires sorts after every other. */
export const NULL_IS_LAST: readonly string[] = ['expires_at'];

export const linkListFilters = {
  domain: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[^\\s/:@]+$',
      description: "Only links on this domain (the default domain's host name for links without one)",
    }),
  ),
  tag: Type.Optional(
    Type.String({
      pattern: TAG_PATTERN,
      minLength: 1,
      maxLength: 32,
      description: 'Only links with this tag (any case)',
    }),
  ),
  health: Type.Optional(
    Type.Union([Type.Literal('ok'), Type.Literal('broken'), Type.Literal('unknown')], {
      description: 'SPEC §24: only links whose health has this status (health=broken: the links to fix)',
    }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: NO_CONTROL_CHARACTERS,
      description:
        'Only links whose original_url, short_code, title or one of whose aliases contains this text (ignoring ASCII case; % and _ match themselves)',
    }),
  ),
};

export const LinkListQuery = Type.Object({
  sort: sortQuery(Object.keys(LINK_SORT_COLUMNS)),
  ...linkListFilters,
  ...paginationQuery,
});
export type LinkListQueryT = Static<typeof LinkListQuery>;

/** A link's state for the admin list's `status` filter. */
export type LinkStatus = 'active' | 'expired' | 'disabled';

/** The admin list's filters beyond a user's (SPEC §18): whose links, and in which state. */
export const allLinksFilters = {
  user_id: Type.Optional(
    Type.Integer({
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "Only this user's links",
    }),
  ),
  status: Type.Optional(
    Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('disabled')], {
      description:
        'active: neither disabled nor expired; expired: past expires_at (the sweep removes such a link within a minute, leaving its code answering 410); disabled: disabled by an admin',
    }),
  ),
};

export const AllLinksQuery = Type.Object({
  sort: sortQuery(Object.keys(LINK_SORT_COLUMNS)),
  ...linkListFilters,
  ...allLinksFilters,
  ...paginationQuery,
});
export type AllLinksQueryT = Static<typeof AllLinksQuery>;

export const UserLinksParams = UserPathParams;

/** Registered as OpenAPI components. */
export const linkSchemas = [LinkSchema, LinkListSchema, LinkCreateSchema, RuleSchema, RuleListSchema];
