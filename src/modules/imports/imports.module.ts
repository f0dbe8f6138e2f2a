import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { createImportsRepository, type ImportedClickWriter } from './imports.repository.js';
import type { CreatedCode } from './import-runner.js';
import { importsRoutes } from './imports.routes.js';
import { importSchemas } from './imports.schemas.js';
import { createImportsService } from './imports.service.js';

export interface ImportsModuleDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  publicBaseUrl: string;
  /** the clicks module's writer of imported visits (records and rollups, inside the import's transaction) */
  writeVisits: ImportedClickWriter;
  /** codes created by an import: the link cache drops any "missing" it holds for them */
  created?: (codes: readonly CreatedCode[]) => void;
}

/** Imports from other link services (SPEC §20): the service (the CLI runs it too) and the admin endpoint (v1). */
export function createImportsModule(deps: ImportsModuleDeps) {
  const imports = createImportsService({ ...deps, repo: createImportsRepository(deps) });
  return appModule({
    imports,
    schemas: importSchemas,
    apiRoutes: async (api, { basePath, version }) => {
      if (version === 1) await api.register(importsRoutes, { imports, basePath });
    },
  });
}
