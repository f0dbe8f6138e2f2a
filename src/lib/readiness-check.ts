/**
 * Readiness checks (GET /readyz). A check resolves when its dependency can serve traffic and rejects with a
 * message safe to publish otherwise. Each layer that owns a dependency writes its check (infra/storage-health.ts,
 * modules/health/readiness.ts for the database and Redis); app.ts passes a record of them to the health routes.
 */
export type ReadinessCheck = () => Promise<void>;

export class NotReadyError extends Error {
  override name = 'NotReadyError';
}
