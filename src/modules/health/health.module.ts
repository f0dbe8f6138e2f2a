import { appModule } from '../../app-module.js';
import { healthRoutes, type HealthRoutesOptions } from './health.routes.js';
import { healthSchemas } from './health.schemas.js';

/** Health, readiness and metrics (/healthz, /readyz, /metrics): at the root, outside the API's hooks and limits. */
export function createHealthModule(options: HealthRoutesOptions) {
  return appModule({
    schemas: healthSchemas,
    rootRoutes: async (scope) => {
      await scope.register(healthRoutes, options);
    },
  });
}
