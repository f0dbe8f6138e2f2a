/**
 * The health module's public face, for the wiring (app.ts, shared-state.ts): the /healthz, /readyz and
 * /metrics routes, their schemas, and the readiness checks of the database and Redis.
 */
export { healthRoutes } from './health.routes.js';
export { healthSchemas } from './health.schemas.js';
export { databaseCheck, redisReadiness } from './readiness.js';
