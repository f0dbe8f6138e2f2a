import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../../lib/common.schemas.js';
import { UserPathParams } from '../../../lib/user-path.js';
import { securityFor } from '../../../plugins/auth.js';
import { LinkCodeParams } from '../../../lib/link-code.js';
import Type, { type TSchema } from 'typebox';
import { renameKeys, toCamel } from '../../../lib/case-mapping.js';
import type { ApiVersion } from '../../../plugins/versioning.js';
import { LinkStatsQuery, UserStatsQuery } from './stats.schemas.js';
import type { StatsService } from './stats.service.js';

/** The statistics' edge of each API version: v1 snake_case, v2 camelCase (SPEC §9). */
const statsEdges: Record<ApiVersion, { stats: TSchema; userStats: TSchema; out<T>(body: unknown): T }> = {
  1: { stats: Type.Ref('LinkStats'), userStats: Type.Ref('UserStats'), out: <T>(body: unknown) => body as T },
  2: {
    stats: Type.Ref('LinkStatsV2'),
    userStats: Type.Ref('UserStatsV2'),
    out: <T>(body: unknown) => renameKeys<T>(body, toCamel),
  },
};

/** GET /links/{code}/stats (SPEC §6, §15) and GET /users/{id}/stats (SPEC §15). */
export const statsRoutes: FastifyPluginAsyncTypebox<{ stats: StatsService; version: ApiVersion }> = async (
  app,
  opts,
) => {
  const edge = statsEdges[opts.version];
  app.get(
    '/links/:code/stats',
    {
      onRequest: app.access('optional', 'stats:read'),
      schema: {
        operationId: 'getLinkStats',
        tags: ['links'],
        summary: "A link's click statistics (owner or admin; anyone for an anonymous link)",
        description:
          'Lifetime totals (humans and bots apart) plus a time series and top referrers, user agents, browsers, OS, devices and countries over a window, in a time zone. Computed from rollups: the cost does not grow with the number of clicks.',
        security: securityFor('optional'),
        params: LinkCodeParams,
        querystring: LinkStatsQuery,
        response: {
          200: { ...edge.stats, description: 'Lifetime totals, and the time series and top lists of the window' },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request) => edge.out(await opts.stats.stats(request.params.code, request.query, request.caller)),
  );

  app.get(
    '/users/:id/stats',
    {
      onRequest: app.access('selfOrAdmin', 'stats:read'),
      schema: {
        operationId: 'getUserStats',
        tags: ['links'],
        summary: "Click statistics over all of a user's links (themself or an admin; `me` for the caller)",
        description:
          "The same figures as a link's statistics, summed over the user's links, plus the links with the most human clicks. Computed from per-user rollups: the cost grows neither with the number of clicks nor with the number of links. With `domain` (or through an API key limited to domains: those domains), only the links on it count, summed from their own rollups: the cost then grows with the number of those links, still not with clicks.",
        security: securityFor('selfOrAdmin'),
        params: UserPathParams,
        querystring: UserStatsQuery,
        response: {
          200: { ...edge.userStats, description: "Totals, time series and top lists over the user's links" },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request) =>
      edge.out(await opts.stats.userStats(request.params.id, request.query, request.caller?.apiKey?.domains ?? null)),
  );
};
