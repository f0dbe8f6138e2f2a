import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../lib/app-error.js';
import { isDatabaseConnectionFault } from '../db/pg-connection-faults.js';

/**
 * A dependency that fails is the service's 503 with Retry-After, never a 500 (SPEC §17): this maps what the
 * drivers throw when the database, Redis or the disk under DATA_DIR cannot do their part to the error the
 * client gets. A failure of the request itself (a constraint, a bug) is not matched and stays a 500.
 */

/** Seconds a client is told to wait: a lost connection is usually back within seconds, a full disk is not. */
const RETRY_CONNECTION_S = '5';
const RETRY_STORAGE_S = '30';

/** Node's errno codes (and SQLite's) for a disk that is full or a file system that refuses writes. */
const STORAGE_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_READONLY_DBMOVED',
  'SQLITE_READONLY_RECOVERY',
  'SQLITE_READONLY_CANTLOCK',
  'SQLITE_READONLY_ROLLBACK',
  'SQLITE_READONLY_DIRECTORY',
  'SQLITE_IOERR_WRITE',
  'SQLITE_IOERR_FSYNC',
  'SQLITE_IOERR_SHMSIZE',
]);
/** PostgreSQL: disk_full, a read-only transaction (a standby after a failover). */
const PG_STORAGE_CODES = new Set(['53100', '25006']);

/** ioredis's errors for a connection that is down or a command that got no answer in time (infra/redis.ts). */
const REDIS_DOWN =
  /^(Connection is closed\.|Stream isn't writeable and enableOfflineQueue options is false|Reached the max retries per request limit|Command timed out)/;

export type Dependency = 'database' | 'storage' | 'redis';

/** Which dependency an error says failed, or null when it is not one of theirs. */
export function failedDependency(err: unknown): Dependency | null {
  if (err === null || typeof err !== 'object') return null;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && (STORAGE_CODES.has(code) || PG_STORAGE_CODES.has(code))) return 'storage';
  if (isDatabaseConnectionFault(err)) return 'database';
  if (name === 'MaxRetriesPerRequestError' || (typeof message === 'string' && REDIS_DOWN.test(message))) return 'redis';
  return null;
}

/** The client's answer for a dependency's failure, or null when `err` is not one. */
export function dependencyError(err: unknown): AppError | null {
  switch (failedDependency(err)) {
    case 'storage':
      return new AppError('STORAGE_UNAVAILABLE', 'The storage is full or read-only: nothing can be written now', [], {
        'Retry-After': RETRY_STORAGE_S,
      });
    case 'database':
      return new AppError('SERVICE_UNAVAILABLE', 'The database is unreachable', [], {
        'Retry-After': RETRY_CONNECTION_S,
      });
    case 'redis':
      return new AppError('SERVICE_UNAVAILABLE', 'A shared dependency (Redis) is unreachable', [], {
        'Retry-After': RETRY_CONNECTION_S,
      });
    default:
      return null;
  }
}

const LOG_INTERVAL_MS = 10_000;

/**
 * A listener for lost connections that logs the loss once, not once per connection or per request: at most
 * one line per LOG_INTERVAL_MS, counting the errors it did not log.
 */
export function connectionLossLogger(log: FastifyBaseLogger, connection: string): (err: Error) => void {
  let lastAt = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  return (err) => {
    const now = Date.now();
    if (now - lastAt < LOG_INTERVAL_MS) {
      unlogged += 1;
      return;
    }
    log.error(
      { err: { message: err.message, code: (err as { code?: unknown }).code }, connection, alsoSince: unlogged },
      `${connection} connection lost; requests that need it answer 503 until it is back`,
    );
    lastAt = now;
    unlogged = 0;
  };
}
