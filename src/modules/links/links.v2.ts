import Type, { type TSchema } from 'typebox';
import { AppError } from '../../lib/app-error.js';
import { renameKeys, renameSchemaProperties, toCamel, toSnake } from '../../lib/case-mapping.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';
import { compileBodyValidator } from '../../plugins/validation.js';
import { validationDetails } from '../../plugins/errors.js';
import { bulkBody, bulkResultSchema } from './links.bulk.js';
import {
  AllLinksQuery,
  allLinksFilters,
  LINK_SORT_COLUMNS,
  LinkCreateSchema,
  linkListFilters,
  LinkPatchSchema,
  LinkSchema,
  type LinkCreate,
} from './links.schemas.js';

/**
 * The link edge of each API version. v1 keeps the source document's snake_case; v2 renames every link field to
 * camelCase (SPEC §9) — in bodies, responses, stats and the `sort` values — and nothing else changes: the same
 * service answers both.
 */
export interface LinkEdge {
  link: TSchema;
  linkList: TSchema;
  createBody: TSchema;
  patchBody: TSchema;
  listQuery: TSchema;
  /** the admin list's query (GET /links) */
  allLinksQuery: TSchema;
  bulkBody: TSchema;
  bulkResult: TSchema;
  /** service result → response body */
  out<T>(body: unknown): T;
  /** request body → service input */
  in<T>(body: unknown): T;
  /** public sort value → v1 sort value */
  sort(value: string | undefined): string | undefined;
  /** an error of the service (fields in v1's words) → its body as this version's client reads it */
  error(err: AppError): { code: AppError['code']; message: string; details: AppError['details'] };
  /** one item of a bulk creation → the service's input, or the 400 that item alone gets */
  parseCreate(item: unknown): LinkCreate | AppError;
}

export const LinkV2Schema = renameSchemaProperties(LinkSchema, toCamel, 'LinkV2');
export const LinkCreateV2Schema = renameSchemaProperties(LinkCreateSchema, toCamel, 'LinkCreateV2');
export const LinkListV2Schema = Type.Object(
  { data: Type.Array(Type.Ref('LinkV2'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'LinkListV2', additionalProperties: false },
);
const LinkBulkResultSchema = bulkResultSchema('Link', 'LinkBulkResult');
const LinkBulkResultV2Schema = bulkResultSchema('LinkV2', 'LinkBulkResultV2');

const v2Sorts = Object.keys(LINK_SORT_COLUMNS).map(toCamel);

/** Errors whose details already name the fields as the client sent them (a bulk item's own validation). */
const namedAsSent = new WeakSet<AppError>();

function itemParser(schema: TSchema, toInput: (item: unknown) => LinkCreate): (item: unknown) => LinkCreate | AppError {
  const check = compileBodyValidator(schema);
  return (item) => {
    if (check(item)) return toInput(item);
    const err = new AppError('VALIDATION_ERROR', 'Link body is invalid', validationDetails(check.errors ?? [], 'body'));
    namedAsSent.add(err);
    return err;
  };
}

const errorBody =
  (rename: (field: string) => string): LinkEdge['error'] =>
  (err) => ({
    code: err.code,
    message: err.message,
    details: namedAsSent.has(err) ? err.details : err.details.map((d) => ({ ...d, field: rename(d.field) })),
  });

const v1In = <T>(body: unknown) => body as T;
const v2In = <T>(body: unknown) => renameKeys<T>(body, toSnake);

export const linkEdges: Record<1 | 2, LinkEdge> = {
  1: {
    link: Type.Ref('Link'),
    linkList: Type.Ref('LinkList'),
    createBody: Type.Ref('LinkCreate'),
    patchBody: LinkPatchSchema,
    listQuery: Type.Object({ sort: sortQuery(Object.keys(LINK_SORT_COLUMNS)), ...linkListFilters, ...paginationQuery }),
    allLinksQuery: AllLinksQuery,
    bulkBody: bulkBody('LinkCreate'),
    bulkResult: Type.Ref('LinkBulkResult'),
    out: <T>(body: unknown) => body as T,
    in: v1In,
    sort: (value) => value,
    error: errorBody((name) => name),
    parseCreate: itemParser(LinkCreateSchema, v1In),
  },
  2: {
    link: Type.Ref('LinkV2'),
    linkList: Type.Ref('LinkListV2'),
    createBody: Type.Ref('LinkCreateV2'),
    patchBody: renameSchemaProperties(LinkPatchSchema, toCamel),
    listQuery: Type.Object({ sort: sortQuery(v2Sorts), ...linkListFilters, ...paginationQuery }),
    allLinksQuery: renameSchemaProperties(
      Type.Object({ sort: sortQuery(v2Sorts), ...linkListFilters, ...allLinksFilters, ...paginationQuery }),
      toCamel,
    ),
    bulkBody: bulkBody('LinkCreateV2'),
    bulkResult: Type.Ref('LinkBulkResultV2'),
    out: <T>(body: unknown) => renameKeys<T>(body, toCamel),
    in: v2In,
    sort: (value) => (value === undefined ? undefined : toSnake(value)),
    error: errorBody(toCamel),
    parseCreate: itemParser(LinkCreateV2Schema, v2In),
  },
};

/** Registered as OpenAPI components. */
export const linkV2Schemas = [
  LinkV2Schema,
  LinkCreateV2Schema,
  LinkListV2Schema,
  LinkBulkResultSchema,
  LinkBulkResultV2Schema,
];
