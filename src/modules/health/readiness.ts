import { sql, type Kysely } from 'kysely';
import type { Storage } from '../../db/database.js';
import { pendingMigrations } from '../../db/migrator.js';
import { NotReadyError, type ReadinessCheck } from '../../lib/readiness-check.js';

/** The database answers a query and has every migration this build knows. */
export function databaseCheck(storage: Pick<Storage, 'db' | 'dialect'>): ReadinessCheck {
  const db = storage.db as unknown as Kysely<unknown>;
  return async () => {
    try {
      await sql`select 1`.execute(db);
    } catch (err) {
      throw new NotReadyError('the database is unreachable', { cause: err });
    }
    const pending = await pendingMigrations(db, storage.dialect);
    if (pending.length) throw new NotReadyError(`migrations not applied: ${pending.join(', ')}`);
  };
}

export interface CheckResult {
  name: string;
  ok: boolean;
  message?: string;
  cause?: unknown;
}

/** Runs every check at once, each bounded by `timeoutMs` (a hung dependency is a failed one). */
export async function runChecks(checks: Record<string, ReadinessCheck>, timeoutMs: number): Promise<CheckResult[]> {
  return Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<CheckResult> => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new NotReadyError(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([check(), timeout]);
        return { name, ok: true };
      } catch (err) {
        const message = err instanceof NotReadyError ? err.message : 'check failed';
        return { name, ok: false, message, cause: err instanceof NotReadyError ? err.cause : err };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

/** Redis (scale-out) answers PING. */
export function redisReadiness(redis: { ping(): Promise<string> }): ReadinessCheck {
  return async () => {
    try {
      await redis.ping();
    } catch (err) {
      throw new NotReadyError('redis is unreachable', { cause: err });
    }
  };
}
