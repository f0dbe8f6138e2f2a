import { appModule } from '../../app-module.js';
import type { Config } from '../../config.js';
import type { UsersRepository } from '../users/index.js';
import { instanceRoutes } from './instance.routes.js';
import { instanceSchemas } from './instance.schemas.js';
import { createInstanceService } from './instance.service.js';

/** The instance's public description (GET /instance) and the first-run hint. */
export function createInstanceModule(deps: {
  config: Pick<Config, 'registration' | 'anonymousLinks' | 'adminUsername' | 'cliCommand'>;
  users: Pick<UsersRepository, 'hasActiveAdmin'>;
}) {
  const instance = createInstanceService(deps);
  return appModule({
    instance,
    schemas: instanceSchemas,
    apiRoutes: async (api, { version }) => {
      await api.register(instanceRoutes, { instance, version });
    },
  });
}
