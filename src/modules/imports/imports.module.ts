import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { LinkImports } from '../links/index.js';
import { createImportsRepository, type ImportedClickWriter } from './imports.repository.js';
import { importsRoutes } from './imports.routes.js';
import { importSchemas } from './imports.schemas.js';
import { createImportsService, HEARTBEAT_MS } from './imports.service.js';
import type { SourceLimits } from './sources/index.js';
import type { ImportPace, VisitThread } from './import-context.js';

export interface ImportsModuleDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  publicBaseUrl: string;
  /** the clicks module's writer of imported visits (records and rollups, inside the import's transaction) */
  writeVisits: ImportedClickWriter;
  /** the links module's way in for imported links (SPEC §25: the API's rules, one way to write a link) */
  links: LinkImports;
  limits: Omit<SourceLimits, 'signal'>;
  heartbeatMs?: number;
  /** the clicks module's statistics forget the sums they remember for past days (imported visits land there) */
  visitsWritten?: () => void;
  /** links and visits per transaction: a server's (default) keeps its redirects fast; the CLI's (CLI_PACE) is faster */
  pace?: ImportPace;
  /** the clicks module's thread for a run's visits (the CLI on the embedded engine) */
  visitThread?: () => VisitThread;
}

/**
 * Imports from other link services (SPEC §20, §25): the service (the CLI runs it too), the admin endpoint (v1),
 * the sweep that shows a job whose process died as `interrupted`, and a shutdown that stops running jobs at
 * their next transaction boundary.
 */
export function createImportsModule(deps: ImportsModuleDeps) {
  const imports = createImportsService({ ...deps, repo: createImportsRepository(deps) });
  return appModule({
    imports,
    schemas: importSchemas,
    jobs: [
      {
        name: 'sweep-interrupted-imports',
        everyMs: deps.heartbeatMs ?? HEARTBEAT_MS,
        run: () => imports.sweepInterrupted(),
      },
    ],
    close: () => imports.close(),
    apiRoutes: async (api, { basePath, version }) => {
      if (version === 1) await api.register(importsRoutes, { imports, basePath });
    },
  });
}
