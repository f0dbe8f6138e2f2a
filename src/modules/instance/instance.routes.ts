import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { renameKeys, renameSchemaProperties, toCamel, toSnake } from '../../lib/case-mapping.js';
import { errorResponses } from '../../lib/common.schemas.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { InstancePatchSchema } from './instance.schemas.js';
import type { InstancePatch, InstanceService } from './instance.service.js';

/**
 * GET /instance: public, for the dashboard's sign-in and sign-up screens (v1 snake_case, v2 camelCase). PATCH
 * /instance: an admin sets the default domain's app links (SPEC §21).
 */
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

  const out = (info: unknown) => (opts.version === 1 ? info : renameKeys(info, toCamel));
  app.patch(
    '/instance',
    {
      onRequest: app.access('admin'),
      schema: {
        operationId: 'updateInstance',
        tags: ['instance'],
        summary:
          "Set or clear the default domain's app links (admins): apple_app_site_association and android_asset_links",
        description:
          'Served at /.well-known/apple-app-site-association and /.well-known/assetlinks.json on any host that is not a verified domain. ' +
          'A document larger than 32768 bytes or nested deeper than 16 levels: 400 VALIDATION_ERROR naming it.',
        body: opts.version === 1 ? InstancePatchSchema : renameSchemaProperties(InstancePatchSchema, toCamel),
        response: {
          200: { ...Type.Ref(opts.version === 1 ? 'Instance' : 'InstanceV2'), description: 'This instance, changed' },
          ...errorResponses(400, 401, 403, 413, 415, 429),
        },
      },
    },
    async (request) => {
      const body = opts.version === 1 ? request.body : renameKeys(request.body, toSnake);
      return out(await instance.patch(body as InstancePatch));
    },
  );
};
