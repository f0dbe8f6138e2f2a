import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../lib/common.schemas.js';
import { securityFor } from '../../plugins/auth.js';
import { LinkCodeParams } from '../links/links.schemas.js';
import { linkEdges } from '../links/links.v2.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { LinkStatsQuery } from './clicks.schemas.js';
import type { ClicksService } from './clicks.service.js';

/** GET /links/{code}/stats (SPEC §6). */
export const clicksRoutes: FastifyPluginAsyncTypebox<{ clicks: ClicksService; version: ApiVersion }> = async (app, opts) => {
  const edge = linkEdges[opts.version];
  app.get('/links/:code/stats', {
    onRequest: app.access('optional', 'stats:read'),
    schema: {
      operationId: 'getLinkStats', tags: ['links'],
      summary: "A link's click statistics (owner or admin; anyone for an anonymous link)",
      description: 'Lifetime totals plus a time series and top referrers / user agents over a window. Computed from rollups: the cost does not grow with the number of clicks.',
      security: securityFor('optional'),
      params: LinkCodeParams,
      querystring: LinkStatsQuery,
      response: { 200: { ...edge.stats, description: 'Lifetime totals, and the time series and top lists of the window' }, ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => edge.out(await opts.clicks.stats(request.params.code, request.query, request.caller)));
};
