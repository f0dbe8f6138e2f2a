import Type, { type Static } from 'typebox';
import { renameSchemaProperties, toCamel } from '../../lib/case-mapping.js';
import { Id, IdParam, Instant } from '../../lib/common.schemas.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';
import { SCOPES, ScopeSchema } from '../../lib/scopes.js';
import { UserIdPathParam, UserPathParams } from '../../lib/user-path.js';

/** SPEC §14. v1 names the fields as the contract does (snake_case); v2 renames them to camelCase. */
const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001F\\u007F]*$';
const Name = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: NO_CONTROL_CHARACTERS,
  description: '1-64 characters, to tell keys apart',
});
const Scopes = Type.Array(ScopeSchema, {
  minItems: 1,
  maxItems: SCOPES.length,
  uniqueItems: true,
  description: 'What the key may do: a non-empty subset of the scopes',
});

const record = {
  id: Id(),
  name: Name,
  prefix: Type.String({
    pattern: '^[0-9a-zA-Z]{8}$',
    minLength: 8,
    maxLength: 8,
    description: 'The first 8 characters after `fry_`',
  }),
  scopes: Scopes,
  created_at: Instant(),
  expires_at: Type.Union([Instant(), Type.Null()], { description: 'null: never expires' }),
  last_used_at: Type.Union([Instant(), Type.Null()], {
    description: 'The latest use, recorded at most once a minute; null before the first use',
  }),
  domains: Type.Union(
    [
      Type.Array(Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), {
        maxItems: 100,
        uniqueItems: true,
      }),
      Type.Null(),
    ],
    {
      description:
        'The domains (ids; 0: the default domain) whose links and domains the key may act on; null: every one its user may',
    },
  ),
};
const example = {
  id: 3,
  name: 'deploy script',
  prefix: 'a1B2c3D4',
  scopes: ['links:read', 'links:write'],
  created_at: '2026-11-21T10:15:30.123Z',
  expires_at: null,
  last_used_at: null,
  domains: null,
};

export const ApiKeySchema = Type.Object(record, { $id: 'ApiKey', additionalProperties: false, examples: [example] });
export type ApiKey = Static<typeof ApiKeySchema>;

export const ApiKeyCreatedSchema = Type.Object(
  {
    ...record,
    key: Type.String({
      pattern: '^fry_[0-9a-zA-Z]{32,}$',
      minLength: 36,
      maxLength: 64,
      description:
        'The key itself, shown this once: send it as `Authorization: Bearer fry_…`. Only a hash of it is kept.',
    }),
  },
  {
    $id: 'ApiKeyCreated',
    additionalProperties: false,
    examples: [{ ...example, key: 'fry_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0' }],
  },
);
export type ApiKeyCreated = Static<typeof ApiKeyCreatedSchema>;

export const ApiKeyListSchema = Type.Object(
  { data: Type.Array(Type.Ref('ApiKey'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'ApiKeyList', additionalProperties: false },
);

const readOnly = Type.Optional(Type.Unknown({ description: 'Read-only; ignored' }));

export const ApiKeyCreateSchema = Type.Object(
  {
    name: Name,
    scopes: Scopes,
    expires_at: Type.Optional(Type.Union([Instant('A future instant; null or omitted: never'), Type.Null()])),
    domains: Type.Optional(
      Type.Union(
        [
          Type.Array(Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), {
            maxItems: 100,
          }),
          Type.Null(),
        ],
        {
          description:
            "Limit the key to these domains (ids of the user's domains; 0: the default domain); null or omitted: not limited",
        },
      ),
    ),
    id: readOnly,
    prefix: readOnly,
    created_at: readOnly,
    last_used_at: readOnly,
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'deploy script', scopes: ['links:read', 'links:write'], expires_at: '2027-01-01T00:00:00.000Z' },
    ],
  },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreateSchema>;

export const API_KEY_SORT_COLUMNS = { created_at: 'created_at', name: 'name' } as const;
export const ApiKeyListQuery = Type.Object({ sort: sortQuery(Object.keys(API_KEY_SORT_COLUMNS)), ...paginationQuery });
export type ApiKeyListQueryT = Static<typeof ApiKeyListQuery>;

/** `{id}` may be `me` (lib/user-path.ts). */
export const UserApiKeysParams = UserPathParams;
export const UserApiKeyParams = Type.Object({ id: UserIdPathParam, key_id: IdParam }, { additionalProperties: false });

export const ApiKeyV2Schema = renameSchemaProperties(ApiKeySchema, toCamel, 'ApiKeyV2');
export const ApiKeyCreatedV2Schema = renameSchemaProperties(ApiKeyCreatedSchema, toCamel, 'ApiKeyCreatedV2');
export const ApiKeyListV2Schema = Type.Object(
  { data: Type.Array(Type.Ref('ApiKeyV2'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'ApiKeyListV2', additionalProperties: false },
);

/** Registered as OpenAPI components. */
export const apiKeySchemas = [
  ApiKeySchema,
  ApiKeyCreatedSchema,
  ApiKeyListSchema,
  ApiKeyV2Schema,
  ApiKeyCreatedV2Schema,
  ApiKeyListV2Schema,
];
