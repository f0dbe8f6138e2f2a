import Type, { type Static } from 'typebox';
import { Id, IdParam, Instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';

export const ROLES = ['user', 'admin'] as const;
export const STATUSES = ['pending', 'active', 'suspended'] as const;

const Role = Type.Union([Type.Literal('user'), Type.Literal('admin')], {
  description: 'Only an admin may set or change it',
});
const Status = Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('suspended')], {
  description: 'A new user is pending; only an admin may change it',
});
const Username = Type.String({
  pattern: '^[A-Za-z0-9._-]{3,32}$',
  minLength: 3,
  maxLength: 32,
  description: '3-32 of A-Z a-z 0-9 . _ -, unique ignoring case',
});
const Email = Type.String({ format: 'email', maxLength: 254, description: 'Unique ignoring case' });
const Password = Type.String({
  format: 'password',
  minLength: 8,
  maxLength: 128,
  description: 'Write-only; stored as a salted scrypt hash',
});
// No control characters (NO_CONTROL_CHARACTERS): PostgreSQL text cannot hold NUL (a 500 before this rule), and no name needs them.
const Name = Type.Union([Type.String({ minLength: 1, maxLength: 200, pattern: NO_CONTROL_CHARACTERS }), Type.Null()]);
const Age = Type.Union([Type.Integer({ format: 'int32', minimum: 0, maximum: 150 }), Type.Null()]);
const Version = Type.Integer({
  format: 'int64',
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'Increases by one on every change',
});

/** Read-only fields a client may echo back from a GET; accepted and ignored on writes (SPEC §1). */
const echoed = {
  id: Type.Optional(Type.Unknown({ description: 'Read-only; ignored' })),
  createdAt: Type.Optional(Type.Unknown({ description: 'Read-only; ignored' })),
  updatedAt: Type.Optional(Type.Unknown({ description: 'Read-only; ignored' })),
};

export const UserSchema = Type.Object(
  {
    id: Id(),
    username: Username,
    email: Email,
    role: Role,
    status: Status,
    name: Name,
    age: Age,
    version: Version,
    createdAt: Instant(),
    updatedAt: Instant(),
  },
  {
    $id: 'User',
    additionalProperties: false,
    examples: [
      {
        id: 1,
        username: 'ada',
        email: 'ada@example.com',
        role: 'user',
        status: 'pending',
        name: 'Ada Lovelace',
        age: 36,
        version: 1,
        createdAt: '2026-11-21T10:15:30.123Z',
        updatedAt: '2026-11-21T10:15:30.123Z',
      },
    ],
  },
);
export type User = Static<typeof UserSchema>;

export const UserCreateSchema = Type.Object(
  {
    username: Username,
    email: Email,
    password: Password,
    role: Type.Optional(Role),
    status: Type.Optional(Status),
    name: Type.Optional(Name),
    age: Type.Optional(Age),
    version: Type.Optional(Type.Unknown({ description: 'Read-only; ignored' })),
    ...echoed,
  },
  {
    additionalProperties: false,
    examples: [
      { username: 'ada', email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace', age: 36 },
    ],
  },
);
export type UserCreate = Static<typeof UserCreateSchema>;

export const UserReplaceSchema = Type.Object(
  {
    username: Username,
    email: Email,
    password: Type.Optional(Password),
    role: Type.Optional(Role),
    status: Type.Optional(Status),
    name: Type.Optional(Name),
    age: Type.Optional(Age),
    version: Type.Optional(Version),
    currentPassword: Type.Optional(
      Type.String({
        format: 'password',
        minLength: 1,
        maxLength: 128,
        writeOnly: true,
        description:
          "Your current password: required when you change your own `password` (not when an admin changes another user's); ignored otherwise",
      }),
    ),
    ...echoed,
  },
  {
    additionalProperties: false,
    description:
      'PUT: omitted name/age become null; omitted role/status stay as they are. A change of password, role or status revokes every token issued to the user before it',
  },
);
export type UserReplace = Static<typeof UserReplaceSchema>;

/** PATCH takes the fields of PUT, each optional. */
export const UserPatchSchema = Type.Partial(UserReplaceSchema, {
  additionalProperties: false,
  description: 'JSON merge patch (RFC 7396): only sent fields change; null clears name or age',
});
export type UserPatch = Static<typeof UserPatchSchema>;

export const UserListSchema = Type.Object(
  { data: Type.Array(Type.Ref('User'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'UserList', additionalProperties: false },
);

export const USER_SORT_COLUMNS = { id: 'id', username: 'username', email: 'email', createdAt: 'created_at' } as const;

export const UserListQuery = Type.Object({
  role: Type.Optional(Role),
  status: Type.Optional(Status),
  sort: sortQuery(Object.keys(USER_SORT_COLUMNS)),
  ...paginationQuery,
});
export type UserListQueryT = Static<typeof UserListQuery>;

export const UserIdParams = Type.Object({ id: IdParam }, { additionalProperties: false });

/** Registered as OpenAPI components. */
export const userSchemas = [UserSchema, UserListSchema];
