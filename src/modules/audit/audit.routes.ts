import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { renameKeys, toCamel, toSnake } from '../../lib/case-mapping.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { sendPage } from '../../lib/pagination.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { AuditListQuery, AuditListQueryV2, type AuditListQueryT } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

const edges = {
  1: {
    list: Type.Ref('AuditList'),
    query: AuditListQuery,
    in: (q: unknown) => q as AuditListQueryT,
    out: <T>(b: T): T => b,
  },
  2: {
    list: Type.Ref('AuditListV2'),
    query: AuditListQueryV2,
    in: (q: unknown) => renameKeys<AuditListQueryT>(q, toSnake),
    out: <T>(b: T): T => renameKeys<T>(b, toCamel),
  },
} as const;

/** SPEC §23: GET /audit-log, admins only. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService; version: ApiVersion }> = async (
  app,
  opts,
) => {
  const edge = edges[opts.version];
  app.get(
    '/audit-log',
    {
      onRequest: app.access('admin'),
      schema: {
        operationId: 'listAuditLog',
        tags: ['audit'],
        summary: 'Who did what: sign-ins, two-factor changes, roles, keys, domains, moderation, imports, backups',
        description:
          'Newest first, cursor pages (`cursor`, `limit`). Filters: `actor_id`, `action`, `since` (inclusive), `until` (exclusive). Entries are kept AUDIT_RETENTION_DAYS.',
        querystring: edge.query,
        response: { 200: { ...edge.list, description: 'One page of entries' }, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const page = await opts.audit.list(edge.in(request.query), request.url);
      return edge.out(sendPage(reply, page));
    },
  );
};
