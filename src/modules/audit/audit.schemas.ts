import Type, { type Static } from 'typebox';
import { AUDIT_ACTIONS } from '../../db/audit-log.js';
import { renameSchemaProperties, toCamel } from '../../lib/case-mapping.js';
import { Id, Instant, NO_CONTROL_CHARACTERS } from '../../lib/common.schemas.js';
import { paginationQuery } from '../../lib/pagination.js';

const Action = Type.Union(
  AUDIT_ACTIONS.map((a) => Type.Literal(a)),
  { description: 'What was done' },
);

const NullableText = (maxLength: number, description: string) =>
  Type.Union([Type.String({ maxLength, pattern: NO_CONTROL_CHARACTERS }), Type.Null()], { description });

/** SPEC §23: one entry of the audit log. v1 names as the contract; v2 camelCase. */
export const AuditEntrySchema = Type.Object(
  {
    id: Id(),
    at: Instant('When it was done'),
    actor_id: Type.Union([Id(), Type.Null()], {
      description: 'The user who did it; null for the CLI or an unknown name',
    }),
    actor: NullableText(64, 'Their username when it was done, `cli` for the ferry command, null for nobody known'),
    action: Action,
    target_type: NullableText(40, 'What it was done to: user, api_key, domain, link, import, backup'),
    target_id: NullableText(128, "That thing's id (a link's code, a backup's file name)"),
    ip: NullableText(64, "The client's address (TRUST_PROXY applied); null for the CLI"),
    details: Type.Union(
      [
        Type.Record(
          Type.String({ maxLength: 40, pattern: '^[a-z_]+$' }),
          Type.Union([
            Type.String({ maxLength: 512, pattern: NO_CONTROL_CHARACTERS }),
            Type.Integer({ format: 'int64', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
            Type.Boolean(),
            Type.Null(),
          ]),
          { maxProperties: 20 },
        ),
        Type.Null(),
      ],
      { description: 'What else the action says (the sign-in method, the role before and after, …)' },
    ),
  },
  { $id: 'AuditEntry', additionalProperties: false },
);

export const AuditListSchema = Type.Object(
  {
    data: Type.Array(Type.Ref('AuditEntry'), { maxItems: 100 }),
    pagination: Type.Object(
      {
        limit: Type.Integer({ format: 'int32', minimum: 1, maximum: 100 }),
        nextCursor: Type.Union([Type.String({ maxLength: 512, pattern: '^[A-Za-z0-9_.-]+$' }), Type.Null()]),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'AuditList', additionalProperties: false },
);

export const AuditEntrySchemaV2 = renameSchemaProperties(AuditEntrySchema, toCamel, 'AuditEntryV2');
export const AuditListSchemaV2 = Type.Object(
  { data: Type.Array(Type.Ref('AuditEntryV2'), { maxItems: 100 }), pagination: AuditListSchema.properties.pagination },
  { $id: 'AuditListV2', additionalProperties: false },
);

export const AuditListQuery = Type.Object(
  {
    actor_id: Type.Optional(Id('Only what this user did')),
    action: Type.Optional(Action),
    since: Type.Optional(Instant('Only entries at or after this instant')),
    until: Type.Optional(Instant('Only entries before this instant')),
    limit: paginationQuery.limit,
    cursor: paginationQuery.cursor,
  },
  { additionalProperties: false },
);
export type AuditListQueryT = Static<typeof AuditListQuery>;

export const AuditListQueryV2 = renameSchemaProperties(AuditListQuery, toCamel);

export const auditSchemas = [AuditEntrySchema, AuditListSchema, AuditEntrySchemaV2, AuditListSchemaV2];
