import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { renameKeys, toCamel } from '../../lib/case-mapping.js';
import { errorResponses } from '../../lib/common.schemas.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import type { InstanceService } from './instance.service.js';

/** GET /instance: public, for the dashboard's sign-in and sign-up screens (v1 snake_case, v2 camelCase). */
export const instanceRoutes: FastifyPluginAsyncTypebox<{ instance: InstanceService; version: ApiVersion }> = async (
  app,
  opts,
) => {
  const { instance } = opts;
  app.get(
    '/instance',
    {
      schema: {
        operationId: 'getInstance',
        tags: ['instance'],
        security: [],
        summary:
          'What this instance allows before signing in: sign-up (REGISTRATION), anonymous links, and on a fresh install how to make the first admin',
        response: {
          200: { ...Type.Ref(opts.version === 1 ? 'Instance' : 'InstanceV2'), description: 'This instance' },
          ...errorResponses(400, 429),
        },
      },
    },
    async () => {
      const info = await instance.info();
      return opts.version === 1 ? info : renameKeys(info, toCamel);
    },
  );
};
