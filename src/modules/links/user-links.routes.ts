import Type from 'typebox';
import { AppError } from '../../lib/app-error.js';
import { negotiate, vendorJsonAsJson } from '../../lib/accept.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { sendPage } from '../../lib/pagination.js';
import { securityFor } from '../../plugins/auth.js';
import { LINK_CSV_COLUMNS } from './links.export.js';
import type { LinkRoutesContext, LinksApp } from './links.routes-context.js';
import { UserLinksParams, type LinkListQueryT } from './links.schemas.js';

const JSON_TYPE = 'application/json';
const CSV_TYPE = 'text/csv';
const USER_LINKS_CSV_HEADER = LINK_CSV_COLUMNS.join(',');

/** GET /users/{id}/links: one page of a user's links as JSON, or all of them as CSV. */
export function registerUserLinksRoute(
  app: LinksApp,
  { edge, tags, opts: { links, exports, version } }: LinkRoutesContext,
): void {
  app.get(
    '/users/:id/links',
    {
      onRequest: app.access('selfOrAdmin', 'links:read'),
      schema: {
        operationId: 'listUserLinks',
        tags,
        security: securityFor('selfOrAdmin'),
        summary:
          "A user's links, oldest first by default (themself or an admin; `me` for the caller), with tag, text and sort; or all of them as CSV",
        description: `With Accept: text/csv the answer streams every link the filters and sort select (page, limit and cursor are the JSON list's) in the generic CSV format of the importer: a header row (${USER_LINKS_CSV_HEADER}), RFC 4180 quoting, several tags or aliases in one cell separated by |; a cell starting with = + - @, tab or CR (after any quotes) gets one quote more, which the importer takes off. The same header on both versions: it is an interchange format.`,
        params: UserLinksParams,
        querystring: edge.listQuery,
        response: {
          200: {
            description: "One page of the user's links, or all of them as CSV",
            content: {
              [JSON_TYPE]: { schema: edge.linkList },
              [CSV_TYPE]: {
                schema: Type.String({
                  pattern: `^${USER_LINKS_CSV_HEADER}\r\n`,
                  description: `A header row (${USER_LINKS_CSV_HEADER}) and one row per link; as long as the list (streamed)`,
                }),
              },
            },
          },
          ...errorResponses(400, 401, 403, 404, 406, 429),
        },
      },
    },
    async (request, reply) => {
      const query = request.query as LinkListQueryT;
      const type = negotiate(vendorJsonAsJson(request.headers.accept), [JSON_TYPE, CSV_TYPE]);
      if (type === null)
        throw new AppError('NOT_ACCEPTABLE', "A user's links are served as application/json or text/csv", [
          { field: 'Accept', message: 'must accept application/json or text/csv' },
        ]);
      reply.header('vary', 'Accept');
      const sorted = { ...query, sort: edge.sort(query.sort) as LinkListQueryT['sort'] };
      const keyDomains = request.caller?.apiKey?.domains ?? null;
      if (type === CSV_TYPE) {
        const csv = await exports.csvForUser(request.params.id, sorted, keyDomains);
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', 'attachment; filename="links.csv"')
          .send(csv);
      }
      const page = await links.listForUser(request.params.id, sorted, request.url, version === 2, keyDomains);
      return edge.out(sendPage(reply, page));
    },
  );
}
