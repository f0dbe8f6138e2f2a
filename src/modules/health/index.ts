/**
 * The health module's public face, for the wiring (app-modules.ts, shared-state.ts): the module with the
 * /healthz, /readyz and /metrics routes, and the readiness checks of the database and Redis.
 */
export { createHealthModule } from './health.module.js';
export type { HealthRoutesOptions } from './health.routes.js';
export { databaseCheck, redisReadiness } from './readiness.js';
