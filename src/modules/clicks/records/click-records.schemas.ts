import Type, { type Static } from 'typebox';
import { renameSchemaProperties, toCamel } from '../../../lib/case-mapping.js';
import { Instant } from '../../../lib/common.schemas.js';
import { paginationQuery } from '../../../lib/pagination.js';
import { domainQuery } from '../../../lib/link-code.js';
import { CLICK_RECORD_COLUMNS } from './click-records.columns.js';

export const ClickRecordSchema = Type.Object(
  Object.fromEntries(CLICK_RECORD_COLUMNS.map((c) => [c.column, c.schema])),
  { $id: 'ClickRecord', additionalProperties: false, description: 'One visit that was redirected' },
);
export const ClickRecordV2Schema = renameSchemaProperties(ClickRecordSchema, toCamel, 'ClickRecordV2');

const listOf = (item: string, $id: string) =>
  Type.Object(
    { data: Type.Array(Type.Ref(item), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
    { $id, additionalProperties: false },
  );
export const ClickRecordListSchema = listOf('ClickRecord', 'ClickRecordList');
export const ClickRecordListV2Schema = listOf('ClickRecordV2', 'ClickRecordListV2');

export const ClickRecordQuery = Type.Object({
  ...domainQuery,
  from: Type.Optional(Instant('Only clicks at or after this instant')),
  to: Type.Optional(Instant('Only clicks before this instant')),
  limit: paginationQuery.limit,
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 512,
      pattern: '^[A-Za-z0-9_.-]+$',
      description: 'JSON: the nextCursor of the previous page (the CSV export is the whole range)',
    }),
  ),
});
export type ClickRecordQueryT = Static<typeof ClickRecordQuery>;

/** Registered as OpenAPI components. */
export const clickRecordSchemas = [
  ClickRecordSchema,
  ClickRecordV2Schema,
  ClickRecordListSchema,
  ClickRecordListV2Schema,
];
