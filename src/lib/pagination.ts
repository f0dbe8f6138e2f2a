import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { sql, type SelectQueryBuilder } from 'kysely';
import Type from 'typebox';
import { AppError } from './app-error.js';

/**
 * Collections (SPEC §7): page mode (`page`, `limit`, totals) and cursor mode (keyset on the sort key plus
 * `id`, stable under inserts). A cursor is opaque and tamper-evident: base64url JSON plus an HMAC, bound to
 * the sort and filters it was made for, so a cursor edited or reused with other parameters is a 400.
 */
export type SortOrder = 'asc' | 'desc';

export interface ListQuery {
  page?: number;
  limit?: number;
  cursor?: string;
  sort?: string;
  order?: SortOrder;
}

/** Query-string schema pieces; a route adds its `sort` enum and filters. */
export const paginationQuery = {
  page: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: 1_000_000,
      description: 'Page mode: page number (default 1)',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ format: 'int32', minimum: 1, maximum: 100, description: 'Items per page (default 20)' }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 512,
      pattern: '^[A-Za-z0-9_.-]+$',
      description: 'Cursor mode: the nextCursor of the previous page',
    }),
  ),
  order: Type.Optional(
    Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Sort direction (default asc)' }),
  ),
};

export const sortQuery = (fields: readonly string[]) =>
  Type.Optional(
    Type.Union(
      fields.map((f) => Type.Literal(f)),
      { description: `Sort field (default ${fields[0]})` },
    ),
  );

interface CursorPayload {
  /** binding: sort, order and filters the cursor belongs to */
  b: string;
  /** last sort value */
  v: string | number;
  /** last id */
  i: number;
}

export interface ResolvedList {
  mode: 'page' | 'cursor';
  limit: number;
  page: number;
  sortColumn: string;
  sortField: string;
  order: SortOrder;
  after: { value: string | number; id: number } | null;
  binding: string;
  /** the value a null sort key sorts as (a nullable column read as "infinitely late"); undefined: not nullable */
  nullsAs?: number;
}

export interface PageResult<T> {
  data: T[];
  pagination: { page?: number; limit: number; total?: number; totalPages?: number; nextCursor: string | null };
  /** RFC 8288 Link header value, or null when there is no relation to give */
  link: string | null;
}

/**
 * What every list route answers with one page: the page's RFC 8288 `Link` header (next/prev/first/last), when
 * it has a relation to give, set on `reply`, and the body `{ data, pagination }` returned for the route to send.
 */
export function sendPage<T>(
  reply: Pick<FastifyReply, 'header'>,
  page: PageResult<T>,
): Pick<PageResult<T>, 'data' | 'pagination'> {
  if (page.link) reply.header('link', page.link);
  return { data: page.data, pagination: page.pagination };
}

export class Paginator {
  constructor(private readonly key: Buffer) {}

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url').slice(0, 22);
  }

  encode(payload: CursorPayload): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode(cursor: string, binding: string): CursorPayload {
    const bad = () =>
      new AppError('VALIDATION_ERROR', 'Invalid cursor', [
        { field: 'cursor', message: 'is not a cursor this collection issued' },
      ]);
    const parts = cursor.split('.');
    const [body, mac] = parts;
    if (parts.length !== 2 || !body || !mac) throw bad();
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw bad();
    let p: CursorPayload;
    try {
      p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
    } catch {
      throw bad();
    }
    if (p.b !== binding) {
      throw new AppError('VALIDATION_ERROR', 'Cursor belongs to other sort or filter parameters', [
        { field: 'cursor', message: 'was issued for other sort or filter parameters' },
      ]);
    }
    return p;
  }

  /**
   * Validates the mode and decodes the cursor. `columns` maps public sort fields to columns; `filters` are
   * the active filters (bound into cursors). `cursorOnly` is for API versions without page mode. Columns in
   * `nullIsLast` may hold null, which sorts as the largest value (a link that never expires expires last).
   */
  resolve(
    query: ListQuery,
    columns: Record<string, string>,
    filters: Record<string, unknown>,
    cursorOnly = false,
    nullIsLast: readonly string[] = [],
  ): ResolvedList {
    if (query.cursor !== undefined && query.page !== undefined) {
      throw new AppError('VALIDATION_ERROR', 'Use either page or cursor, not both', [
        { field: 'cursor', message: 'cannot be combined with page' },
      ]);
    }
    if (cursorOnly && query.page !== undefined) {
      throw new AppError('VALIDATION_ERROR', 'This version pages by cursor only', [
        { field: 'page', message: 'is not supported; use cursor' },
      ]);
    }
    const sortField = query.sort ?? Object.keys(columns)[0]!;
    const sortColumn = columns[sortField];
    if (!sortColumn) {
      throw new AppError('VALIDATION_ERROR', 'Unknown sort field', [
        { field: 'sort', message: `must be one of ${Object.keys(columns).join(', ')}` },
      ]);
    }
    const order = query.order ?? 'asc';
    const binding = JSON.stringify([sortField, order, filters]);
    const after = query.cursor !== undefined ? this.decode(query.cursor, binding) : null;
    return {
      mode: query.cursor !== undefined || cursorOnly ? 'cursor' : 'page',
      limit: query.limit ?? 20,
      page: query.page ?? 1,
      sortColumn,
      sortField,
      order,
      after: after ? { value: after.v, id: after.i } : null,
      binding,
      ...(nullIsLast.includes(sortColumn) ? { nullsAs: Number.MAX_SAFE_INTEGER } : {}),
    };
  }

  /**
   * Adds ordering, keyset and window to a query. Fetches one row more than the limit, to know whether a
   * next page exists without a second query.
   */
  apply<DB, TB extends keyof DB, O>(
    qb: SelectQueryBuilder<DB, TB, O>,
    list: ResolvedList,
    table: string,
    /** where the order is read instead of `table` (the same values, from a table whose index gives that order) */
    orderFrom?: { sort: string; id: string },
  ): SelectQueryBuilder<DB, TB, O> {
    const ref = sql.ref(orderFrom?.sort ?? `${table}.${list.sortColumn}`);
    // A keyset needs a total order: null read as a value (coalesce) keeps `>` and `=` meaningful. The value is
    // written as a literal so that the expression is an index's (migration 050's expiry-order indexes).
    const col = list.nullsAs === undefined ? ref : sql`coalesce(${ref}, ${sql.lit(list.nullsAs)})`;
    const id = sql.ref(orderFrom?.id ?? `${table}.id`);
    const cmp = list.order === 'asc' ? sql.raw('>') : sql.raw('<');
    let q = qb;
    if (list.after) {
      const { value, id: lastId } = list.after;
      q =
        list.sortColumn === 'id'
          ? q.where(sql<boolean>`${id} ${cmp} ${lastId}`)
          : q.where(sql<boolean>`(${col} ${cmp} ${value} or (${col} = ${value} and ${id} ${cmp} ${lastId}))`);
    }
    const dir = sql.raw(list.order);
    q = q.orderBy(sql`${col} ${dir}`);
    if (list.sortColumn !== 'id') q = q.orderBy(sql`${id} ${dir}`);
    q = q.limit(list.limit + 1);
    if (list.mode === 'page' && !list.after) q = q.offset((list.page - 1) * list.limit);
    return q;
  }

  /** Builds the body's pagination object and the Link header. `total` is counted only in page mode. */
  page<Row extends { id: number }, T>(
    rows: Row[],
    list: ResolvedList,
    total: number | null,
    requestUrl: string,
    toItem: (row: Row) => T,
    sortValue: (row: Row) => string | number,
  ): PageResult<T> {
    const hasMore = rows.length > list.limit;
    const window = hasMore ? rows.slice(0, list.limit) : rows;
    const last = window[window.length - 1];
    const nextCursor = hasMore && last ? this.encode({ b: list.binding, v: sortValue(last), i: last.id }) : null;
    const links: string[] = [];
    const at = (params: Record<string, string | null>) => `<${withParams(requestUrl, params)}>`;
    if (list.mode === 'page') {
      const totalPages = Math.ceil((total ?? 0) / list.limit);
      if (list.page < totalPages) links.push(`${at({ page: String(list.page + 1), cursor: null })}; rel="next"`);
      if (list.page > 1)
        links.push(
          `${at({ page: String(Math.min(list.page - 1, Math.max(totalPages, 1))), cursor: null })}; rel="prev"`,
        );
      links.push(`${at({ page: '1', cursor: null })}; rel="first"`);
      return {
        data: window.map(toItem),
        pagination: { page: list.page, limit: list.limit, total: total ?? 0, totalPages, nextCursor },
        link: links.join(', '),
      };
    }
    if (nextCursor) links.push(`${at({ cursor: nextCursor, page: null })}; rel="next"`);
    links.push(`${at({ cursor: null, page: null })}; rel="first"`);
    return { data: window.map(toItem), pagination: { limit: list.limit, nextCursor }, link: links.join(', ') };
  }
}

/** The paginator of a deployment: cursors are signed with a key derived from (not equal to) the token key. */
export const deploymentPaginator = (jwtSecret: Uint8Array): Paginator =>
  new Paginator(createHash('sha256').update('ferry-cursor:').update(jwtSecret).digest());

/** The request's path and query with some parameters replaced or removed (relative reference, RFC 3986). */
function withParams(requestUrl: string, params: Record<string, string | null>): string {
  const url = new URL(requestUrl, 'http://ferry.invalid');
  for (const [k, v] of Object.entries(params)) {
    if (v === null) url.searchParams.delete(k);
    else url.searchParams.set(k, v);
  }
  return url.pathname + url.search;
}
