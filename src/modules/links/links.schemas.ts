import Type, { type Static } from 'typebox';
import { Count, Id, IdParam, Instant as instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';
import { MAX_URL_LENGTH } from './original-url.js';
import { CODE_PATTERN } from './short-code.js';

/** v1 keeps the source document's snake_case names for links (SPEC §6, §9). */
const shortCode = (description = '1-8 of 0-9 a-z A-Z; case-sensitive') => Type.String({ pattern: CODE_PATTERN, minLength: 1, maxLength: 8, description });
const Instant = instant();

export const LinkSchema = Type.Object(
  {
    id: Id(),
    short_code: shortCode('The short code (case-sensitive)'),
    short_url: Type.String({ format: 'uri', maxLength: 2100, description: 'Absolute public URL of the short link' }),
    original_url: Type.String({ maxLength: MAX_URL_LENGTH, pattern: '^[hH][tT][tT][pP][sS]?://', description: 'The target, exactly as the redirect sends it in Location' }),
    user_id: Type.Union([Id(), Type.Null()], { description: 'Owner; null for an anonymous link or when the owner was deleted' }),
    expires_at: Type.Union([Instant, Type.Null()], { description: 'null: never expires' }),
    created_at: Instant,
    click_count: Count('Clicks recorded so far (written in batches, so it may lag a visit by about CLICK_FLUSH_MS)'),
  },
  {
    $id: 'Link',
    additionalProperties: false,
    examples: [
      {
        id: 42, short_code: 'aZ3k9QxB', short_url: 'http://127.0.0.1:3000/aZ3k9QxB', original_url: 'https://example.com/a/long/path?x=1',
        user_id: 7, expires_at: null, created_at: '2026-11-21T10:15:30.123Z', click_count: 0,
      },
    ],
  },
);
export type Link = Static<typeof LinkSchema>;

const readOnly = Type.Optional(Type.Unknown({ description: 'Read-only; ignored' }));

export const LinkCreateSchema = Type.Object(
  {
    original_url: Type.String({
      minLength: 1,
      pattern: NO_CONTROL_CHARACTERS,
      maxLength: MAX_URL_LENGTH,
      description:
        'Absolute http or https URL with a host; no credentials, whitespace or control characters; not a URL of this service. ' +
        'An internationalised URL is stored in its ASCII (punycode / percent-encoded) form.',
    }),
    short_code: Type.Optional(shortCode(
      'A custom code (1-8 of 0-9 a-z A-Z, case-sensitive). Names of top-level paths (api, docs, v3, healthz, ...) are reserved. Omitted: a random 8-character code.',
    )),
    expires_at: Type.Optional(Type.Union([Instant, Type.Null()], { description: 'A future instant; null or omitted: never' })),
    id: readOnly,
    short_url: readOnly,
    user_id: readOnly,
    created_at: readOnly,
    click_count: readOnly,
  },
  { additionalProperties: false, examples: [{ original_url: 'https://example.com/a/long/path?x=1', short_code: 'promo26', expires_at: '2027-01-01T00:00:00.000Z' }] },
);
export type LinkCreate = Static<typeof LinkCreateSchema>;

export const LinkCodeParams = Type.Object({ code: shortCode() }, { additionalProperties: false });

export const LinkListSchema = Type.Object(
  { data: Type.Array(Type.Ref('Link'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'LinkList', additionalProperties: false },
);

export const LINK_SORT_COLUMNS = { id: 'id', created_at: 'created_at' } as const;

export const LinkListQuery = Type.Object({ sort: sortQuery(Object.keys(LINK_SORT_COLUMNS)), ...paginationQuery });
export type LinkListQueryT = Static<typeof LinkListQuery>;

export const UserLinksParams = Type.Object({ id: IdParam }, { additionalProperties: false });

/** Registered as OpenAPI components. */
export const linkSchemas = [LinkSchema, LinkListSchema];
