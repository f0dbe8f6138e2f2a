/**
 * The imports module's public face (SPEC §20): built by app-modules.ts for the server and the CLI alike.
 */
export { createImportsModule, type ImportsModuleDeps } from './imports.module.js';
export type { ImportsService } from './imports.service.js';
export type { ImportRequest } from './import-context.js';
export type { JobCounts } from './import-batch.js';
export { jobProgress } from './import-job-view.js';
export { CLI_PACE, SERVER_PACE, type ImportPace, type RunEnd } from './import-context.js';
export { SOURCE_NAMES, type SourceName } from './sources/index.js';
/** SPEC §25: a source answer slower than this fails the import. */
export const IMPORT_SOURCE_TIMEOUT_MS = 30_000;
