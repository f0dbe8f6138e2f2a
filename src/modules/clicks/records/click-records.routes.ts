import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { AppError } from '../../../lib/app-error.js';
import { negotiate, vendorJsonAsJson } from '../../../lib/accept.js';
import { renameKeys, toCamel } from '../../../lib/case-mapping.js';
import { errorResponses } from '../../../lib/common.schemas.js';
import { securityFor } from '../../../plugins/auth.js';
import type { ApiVersion } from '../../../plugins/versioning.js';
import { LinkCodeParams } from '../../../lib/link-code.js';
import { sendPage } from '../../../lib/pagination.js';
import { CLICK_RECORD_COLUMNS } from './click-records.columns.js';
import { ClickRecordQuery } from './click-records.schemas.js';
import type { ClickRecordsService } from './click-records.service.js';

const JSON_TYPE = 'application/json';
const CSV_TYPE = 'text/csv';

/** GET /links/{code}/clicks (SPEC §13): JSON pages, or with Accept: text/csv the whole range as CSV. */
export const clickRecordsRoutes: FastifyPluginAsyncTypebox<{
  records: ClickRecordsService;
  version: ApiVersion;
}> = async (app, opts) => {
  const { records } = opts;
  const v2 = opts.version === 2;
  const header = CLICK_RECORD_COLUMNS.map((c) => (v2 ? toCamel(c.column) : c.column));

  app.get(
    '/links/:code/clicks',
    {
      onRequest: app.access('user', 'stats:read'),
      schema: {
        operationId: 'listLinkClicks',
        tags: ['links'],
        security: securityFor('user', 'stats:read'),
        summary:
          "A link's click records, newest first (owner or admin): JSON by cursor, or the whole from/to range as CSV",
        description:
          'With Accept: text/csv the answer streams every record of the range (header row, RFC 4180 quoting; fields starting with = + - @, tab or CR are prefixed with a quote).',
        params: LinkCodeParams,
        querystring: ClickRecordQuery,
        response: {
          200: {
            description: 'The records',
            content: {
              [JSON_TYPE]: { schema: Type.Ref(v2 ? 'ClickRecordListV2' : 'ClickRecordList') },
              [CSV_TYPE]: {
                schema: Type.String({
                  pattern: `^${header.join(',')}\r\n`,
                  description: `A header row (${header.join(',')}) and one row per click, newest first; as long as the range (streamed)`,
                }),
              },
            },
          },
          ...errorResponses(400, 401, 403, 404, 406, 429),
        },
      },
    },
    async (request, reply) => {
      const type = negotiate(vendorJsonAsJson(request.headers.accept), [JSON_TYPE, CSV_TYPE]);
      if (type === null)
        throw new AppError('NOT_ACCEPTABLE', 'Click records are served as application/json or text/csv', [
          { field: 'Accept', message: 'must accept application/json or text/csv' },
        ]);
      reply.header('vary', 'Accept');
      if (type === CSV_TYPE) {
        const csv = await records.csv(request.params.code, request.query, request.caller, header);
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${request.params.code}-clicks.csv"`)
          .send(csv);
      }
      const page = await records.page(request.params.code, request.query, request.caller, request.url);
      const body = sendPage(reply, page);
      return v2 ? renameKeys(body, toCamel) : body;
    },
  );
};
