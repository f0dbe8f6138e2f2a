import type { Readable } from 'node:stream';
import type { LinkRow } from '../../db/types.js';
import { notFound } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isoTime } from '../../lib/common.schemas.js';
import { csvStream, keysetChunks, type CsvCell } from '../../lib/csv-export.js';
import type { Paginator } from '../../lib/pagination.js';
import type { UsersRepository } from '../users/index.js';
import type { LinkDomains } from './link-domains.js';
import { aliasesOf, tagsOf, type LinksRepository } from './links.repository.js';
import { LINK_SORT_COLUMNS, NULL_IS_LAST, type LinkListQueryT } from './links.schemas.js';

/**
 * The generic CSV format of SPEC §20, in this order: what the links export writes and the `csv` importer
 * reads (modules/imports/sources/generic-csv.ts), so an export from one Ferry imports into another unchanged.
 */
export const LINK_CSV_COLUMNS = [
  'url',
  'code',
  'domain',
  'created_at',
  'expires_at',
  'tags',
  'title',
  'max_visits',
  'forward_query',
  'aliases',
] as const;

/** Links per query of an export: what it holds in memory at once, whatever the number of links. */
export const LINK_EXPORT_CHUNK = 1000;

export interface LinksExportDeps {
  links: Pick<LinksRepository, 'listByUser'>;
  users: Pick<UsersRepository, 'findById'>;
  paginator: Paginator;
  clock: Clock;
  domains: Pick<LinkDomains, 'idOf' | 'nameOf' | 'ensureKnown'>;
}

export type LinksExport = ReturnType<typeof createLinksExport>;

const cellsOf = (row: LinkRow, domain: string | null): CsvCell[] => [
  row.original_url,
  row.short_code,
  domain,
  isoTime(Number(row.created_at)),
  row.expires_at === null ? null : isoTime(Number(row.expires_at)),
  tagsOf(row).join('|'),
  row.title,
  row.max_visits === null ? null : Number(row.max_visits),
  Boolean(row.forward_query),
  aliasesOf(row).join('|'),
];

/**
 * A user's links as CSV (GET /users/{id}/links with Accept: text/csv): the JSON list's filters and sort,
 * every link rather than a page, read in keyset chunks as the client takes the text (lib/csv-export.ts).
 * Cells a spreadsheet would run as formulas are escaped reversibly, so the importer reads back what was
 * written. A password cannot be exported (only its hash is kept), nor are visits: the export is the links.
 */
export function createLinksExport(deps: LinksExportDeps) {
  const { links, users, paginator, clock, domains } = deps;

  async function* rows(
    userId: number,
    query: LinkListQueryT,
    filter: Parameters<LinksRepository['listByUser']>[3],
  ): AsyncGenerator<CsvCell[][]> {
    const list = paginator.resolve(
      { sort: query.sort, order: query.order },
      LINK_SORT_COLUMNS,
      { user: userId, ...filter },
      true,
      NULL_IS_LAST,
    );
    const sortValue = (r: LinkRow): number => (r[list.sortColumn as keyof LinkRow] as number | null) ?? list.nullsAs!;
    const chunks = keysetChunks(
      list,
      LINK_EXPORT_CHUNK,
      async (page) => (await links.listByUser(userId, clock.now(), page, filter)).rows,
      sortValue,
    );
    for await (const chunk of chunks) {
      await domains.ensureKnown(chunk);
      yield chunk.map((row) => cellsOf(row, domains.nameOf(row.domain_id)));
    }
  }

  return {
    /** Checks the user and the filters before the first byte; `keyDomains`: the caller's API key's domains, when limited. */
    async csvForUser(userId: number, query: LinkListQueryT, keyDomains: readonly number[] | null): Promise<Readable> {
      if (!(await users.findById(userId))) throw notFound('User');
      const domainId =
        query.domain === undefined ? undefined : await domains.idOf(query.domain, { userId, admin: false });
      const filter = {
        tag: query.tag?.toLowerCase(),
        q: query.q,
        health: query.health,
        ...(domainId !== undefined ? { domainId: domainId ?? -1 } : {}),
        ...(keyDomains ? { domainIds: keyDomains } : {}),
      };
      return csvStream(LINK_CSV_COLUMNS, rows(userId, query, filter), 'reversible');
    },
  };
}
