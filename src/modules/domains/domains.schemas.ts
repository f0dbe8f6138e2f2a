import Type, { type Static } from 'typebox';
import { renameSchemaProperties, toCamel } from '../../lib/case-mapping.js';
import { Id, IdParam, Instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';
import { AndroidAssetLinks, AppleAppSiteAssociation } from '../../lib/app-links.js';

/** SPEC §19. v1 snake_case, v2 camelCase (the same mapping as links, SPEC §9). */
export const HOSTNAME_MAX = 253;
const Hostname = Type.String({
  minLength: 1,
  maxLength: HOSTNAME_MAX,
  pattern: '^[^\\s/:@]+$',
  description:
    'A host name of at least two labels (go.example.com); compared ignoring case, stored lower case; an internationalised name is stored as punycode',
});
const FallbackUrl = (what: string) =>
  Type.Union(
    [Type.String({ minLength: 1, maxLength: 2048, pattern: NO_CONTROL_CHARACTERS, format: 'uri' }), Type.Null()],
    {
      description: `An absolute http(s) URL visitors of this domain are sent to ${what}; null: the usual answer`,
    },
  );
const Scheme = Type.Union([Type.Literal('http'), Type.Literal('https'), Type.Null()], {
  description: "The scheme of short URLs on this domain; null: PUBLIC_BASE_URL's",
});
/** CLICK_RETENTION_DAYS's bound too (config.ts): a hundred years. */
export const CLICK_RETENTION_DAYS_MAX = 36_500;
const STATUS_RULE =
  'pending: not verified yet; active: verified, and its daily re-check passes; failing: verified, re-checks fail (visits are still served); stopped: re-checks have failed for 7 days, so no new links (existing links keep redirecting)';

const editable = {
  scheme: Scheme,
  root_redirect: FallbackUrl('on GET / (the root of the domain)'),
  not_found_redirect: FallbackUrl('instead of a 404 (unknown or deleted code)'),
  expired_redirect: FallbackUrl('instead of a 410 (expired or used-up link)'),
  broken_redirect: FallbackUrl(
    "while a link's destination is broken (SPEC §24) and the link has no fallback_url of its own",
  ),
  // SPEC §21: served on this domain's host once it is verified; never the instance's (the default domain's).
  apple_app_site_association: AppleAppSiteAssociation,
  android_asset_links: AndroidAssetLinks,
  // SPEC §24
  click_retention_days: Type.Union(
    [Type.Integer({ minimum: 0, maximum: CLICK_RETENTION_DAYS_MAX, format: 'int32' }), Type.Null()],
    {
      description:
        "Days the click records of this domain's links are kept (older ones are deleted daily; statistics and counts stay); 0: forever; null: the instance's CLICK_RETENTION_DAYS",
    },
  ),
};

export const DomainSchema = Type.Object(
  {
    id: Id(),
    hostname: Type.String({
      minLength: 1,
      maxLength: HOSTNAME_MAX,
      pattern: '^[a-z0-9.-]+$',
      description: 'Lower case (punycode for internationalised names)',
    }),
    owner_id: Type.Union([Id(), Type.Null()], {
      description: 'Who may put links on it (and admins); null when the owner was deleted',
    }),
    verified_at: Type.Union([Instant(), Type.Null()], {
      description: 'When control of the name was proven; null: not yet (the domain serves no visits)',
    }),
    verification: Type.Object(
      {
        txt_name: Type.String({
          maxLength: 300,
          pattern: '^_ferry\\.[a-z0-9.-]+$',
          description: 'The name of a DNS TXT record that proves control: _ferry.<hostname>',
        }),
        txt_value: Type.String({
          maxLength: 128,
          pattern: '^ferry-verification=[0-9a-zA-Z]+$',
          description: 'Its value',
        }),
        http_path: Type.String({
          maxLength: 128,
          pattern: '^/\\.well-known/ferry-verification/',
          description:
            "Or: http://<hostname><http_path> answers the token, served by the host's current server " +
            "(Ferry answers it only for a verified domain's re-check)",
        }),
      },
      { additionalProperties: false },
    ),
    ...editable,
    status: Type.Union(
      [Type.Literal('pending'), Type.Literal('active'), Type.Literal('failing'), Type.Literal('stopped')],
      { description: STATUS_RULE },
    ),
    status_message: Type.Union([Type.String({ maxLength: 512, pattern: NO_CONTROL_CHARACTERS }), Type.Null()], {
      description: 'Why the last re-check failed; null when it passed',
    }),
    accepts_links: Type.Boolean({ description: 'Whether new links may be put on it (false once stopped)' }),
    last_checked_at: Type.Union([Instant(), Type.Null()], { description: 'The last daily re-check' }),
    failing_since: Type.Union([Instant(), Type.Null()], {
      description: 'Since when re-checks fail; null: the last one passed',
    }),
    created_at: Instant(),
    updated_at: Instant(),
  },
  {
    $id: 'Domain',
    additionalProperties: false,
    examples: [
      {
        id: 5,
        hostname: 'go.example.com',
        owner_id: 7,
        verified_at: null,
        verification: {
          txt_name: '_ferry.go.example.com',
          txt_value: 'ferry-verification=9kQ2xV7pL0aZ3mN8bC4dF6gH1jK5sT2w',
          http_path: '/.well-known/ferry-verification/9kQ2xV7pL0aZ3mN8bC4dF6gH1jK5sT2w',
        },
        scheme: null,
        root_redirect: null,
        not_found_redirect: null,
        expired_redirect: null,
        broken_redirect: null,
        apple_app_site_association: null,
        android_asset_links: null,
        click_retention_days: null,
        status: 'pending',
        status_message: null,
        accepts_links: true,
        last_checked_at: null,
        failing_since: null,
        created_at: '2026-11-21T10:15:30.123Z',
        updated_at: '2026-11-21T10:15:30.123Z',
      },
    ],
  },
);
export type Domain = Static<typeof DomainSchema>;

const readOnly = Type.Optional(Type.Unknown({ description: 'Read-only; ignored' }));
const echoed = {
  id: readOnly,
  verified_at: readOnly,
  verification: readOnly,
  status: readOnly,
  status_message: readOnly,
  accepts_links: readOnly,
  last_checked_at: readOnly,
  failing_since: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
};
const optionalEditable = Object.fromEntries(Object.entries(editable).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof editable]: ReturnType<typeof Type.Optional<(typeof editable)[K]>>;
};

export const DomainCreateSchema = Type.Object(
  {
    hostname: Hostname,
    owner_id: Type.Optional(Id('Admins only: the user the domain is for (default: the caller)')),
    ...optionalEditable,
    ...echoed,
  },
  { $id: 'DomainCreate', additionalProperties: false, examples: [{ hostname: 'go.example.com' }] },
);
export type DomainCreate = Static<typeof DomainCreateSchema>;

export const DomainPatchSchema = Type.Object(
  {
    ...optionalEditable,
    hostname: Type.Optional(
      Type.String({
        maxLength: HOSTNAME_MAX,
        pattern: '^[^\\s/:@]+$',
        description: 'Cannot change: accepted only with the current value',
      }),
    ),
    owner_id: Type.Optional(Id('Admins only: hand the domain to another user')),
    ...echoed,
  },
  {
    additionalProperties: false,
    description:
      'JSON merge patch (RFC 7396): the fallbacks, the scheme, the app links and the click retention; null clears one (an app-links document is replaced whole, not merged)',
    examples: [{ not_found_redirect: 'https://example.com/' }],
  },
);
export type DomainPatch = Static<typeof DomainPatchSchema>;

export const DomainListSchema = Type.Object(
  { data: Type.Array(Type.Ref('Domain'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'DomainList', additionalProperties: false },
);

export const DOMAIN_SORT_COLUMNS = { id: 'id', created_at: 'created_at' } as const;
const ownerFilter = {
  owner_id: Type.Optional(Id('Admins: only the domains of this user (others always see their own)')),
};
export const DomainListQuery = Type.Object({
  sort: sortQuery(Object.keys(DOMAIN_SORT_COLUMNS)),
  ...ownerFilter,
  ...paginationQuery,
});
export type DomainListQueryT = Static<typeof DomainListQuery>;
export const DomainListV2Query = Type.Object({
  sort: sortQuery(Object.keys(DOMAIN_SORT_COLUMNS).map(toCamel)),
  owner_id: ownerFilter.owner_id,
  ...paginationQuery,
});

export const DomainParams = Type.Object({ id: IdParam }, { additionalProperties: false });
export const DomainDeleteQuery = Type.Object({
  force: Type.Optional(
    Type.Boolean({ description: 'Admins only: delete the domain with its links (their codes on it are retired)' }),
  ),
});

export const DomainV2Schema = renameSchemaProperties(DomainSchema, toCamel, 'DomainV2');
export const DomainCreateV2Schema = renameSchemaProperties(DomainCreateSchema, toCamel, 'DomainCreateV2');
export const DomainListV2Schema = Type.Object(
  { data: Type.Array(Type.Ref('DomainV2'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'DomainListV2', additionalProperties: false },
);

/** Registered as OpenAPI components. */
export const domainSchemas = [
  DomainSchema,
  DomainCreateSchema,
  DomainListSchema,
  DomainV2Schema,
  DomainCreateV2Schema,
  DomainListV2Schema,
];
