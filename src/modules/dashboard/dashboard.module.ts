import type { FastifyBaseLogger } from 'fastify';
import { appModule } from '../../app-module.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { dashboardRoutes } from './dashboard.routes.js';
import { defaultWebDir, findWebAssets } from './web-assets.js';

export interface DashboardModuleDeps {
  config: Pick<Config, 'webDir' | 'publicBaseUrl'>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** where a custom domain's root sends a visitor (SPEC §19), if it says */
  domainRoot: (host: string) => string | null | undefined;
}

/** The dashboard (SPEC §16): GET /, /app and its assets, with their own CSP; not the API, not in the document. */
export function createDashboardModule({ config, clock, log, domainRoot }: DashboardModuleDeps) {
  const webDir = config.webDir ?? defaultWebDir();
  const assets = findWebAssets(webDir);
  if (!assets)
    log.warn(
      { webDir },
      'the dashboard is not built (no index.html and assets/ there): /app answers 503 until `npm run build`',
    );
  return appModule({
    schemas: [],
    rootRoutes: async (scope) => {
      await scope.register(dashboardRoutes, { assets, publicBaseUrl: config.publicBaseUrl, clock, domainRoot });
    },
  });
}
