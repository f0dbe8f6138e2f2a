import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { UsersRepository } from '../users/index.js';
import { createInstanceSettings } from './instance.repository.js';
import { instanceRoutes } from './instance.routes.js';
import { instanceSchemas } from './instance.schemas.js';
import { createInstanceService, type InstanceConfig } from './instance.service.js';

/** The instance's public description (GET /instance), the first-run hint, and the default domain's app links. */
export function createInstanceModule(deps: {
  config: InstanceConfig;
  users: Pick<UsersRepository, 'hasActiveAdmin'>;
  db: Kysely<Database>;
  clock: Clock;
}) {
  const instance = createInstanceService({ ...deps, settings: createInstanceSettings(deps.db) });
  return appModule({
    instance,
    schemas: instanceSchemas,
    apiRoutes: async (api, { version }) => {
      await api.register(instanceRoutes, { instance, version });
    },
  });
}
