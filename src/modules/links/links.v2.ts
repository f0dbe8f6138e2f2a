import Type, { type TSchema } from 'typebox';
import { renameKeys, renameSchemaProperties, toCamel, toSnake } from '../../lib/case-mapping.js';
import { paginationQuery, sortQuery } from '../../lib/pagination.js';
import { LinkStatsSchema } from '../clicks/clicks.schemas.js';
import { LINK_SORT_COLUMNS, LinkCreateSchema, LinkSchema } from './links.schemas.js';

/**
 * The link edge of each API version. v1 keeps the source document's snake_case; v2 renames every link field to
 * camelCase (SPEC §9) — in bodies, responses, stats and the `sort` values — and nothing else changes: the same
 * service answers both.
 */
export interface LinkEdge {
  link: TSchema;
  linkList: TSchema;
  stats: TSchema;
  createBody: TSchema;
  listQuery: TSchema;
  /** service result → response body */
  out<T>(body: unknown): T;
  /** request body → service input */
  in<T>(body: unknown): T;
  /** public sort value → v1 sort value */
  sort(value: string | undefined): string | undefined;
}

export const LinkV2Schema = renameSchemaProperties(LinkSchema, toCamel, 'LinkV2');
export const LinkListV2Schema = Type.Object(
  { data: Type.Array(Type.Ref('LinkV2'), { maxItems: 100 }), pagination: Type.Ref('Pagination') },
  { $id: 'LinkListV2', additionalProperties: false },
);
export const LinkStatsV2Schema = renameSchemaProperties(LinkStatsSchema, toCamel, 'LinkStatsV2');

const v2Sorts = Object.keys(LINK_SORT_COLUMNS).map(toCamel);

export const linkEdges: Record<1 | 2, LinkEdge> = {
  1: {
    link: Type.Ref('Link'),
    linkList: Type.Ref('LinkList'),
    stats: Type.Ref('LinkStats'),
    createBody: LinkCreateSchema,
    listQuery: Type.Object({ sort: sortQuery(Object.keys(LINK_SORT_COLUMNS)), ...paginationQuery }),
    out: <T>(body: unknown) => body as T,
    in: <T>(body: unknown) => body as T,
    sort: (value) => value,
  },
  2: {
    link: Type.Ref('LinkV2'),
    linkList: Type.Ref('LinkListV2'),
    stats: Type.Ref('LinkStatsV2'),
    createBody: renameSchemaProperties(LinkCreateSchema, toCamel),
    listQuery: Type.Object({ sort: sortQuery(v2Sorts), ...paginationQuery }),
    out: <T>(body: unknown) => renameKeys<T>(body, toCamel),
    in: <T>(body: unknown) => renameKeys<T>(body, toSnake),
    sort: (value) => (value === undefined ? undefined : toSnake(value)),
  },
};

/** Registered as OpenAPI components. */
export const linkV2Schemas = [LinkV2Schema, LinkListV2Schema, LinkStatsV2Schema];
