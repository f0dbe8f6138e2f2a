import type pg from 'pg';

/**
 * A lost PostgreSQL connection never ends the process (SPEC §17). A pg client that loses its connection —
 * the server restarted, `pg_terminate_backend`, the network dropped — emits 'error'; node-pg's pool listens
 * only while a client is idle, so a client checked out at that moment (inside a request, between the
 * queries of a transaction) had no listener, and Node ended the process on the unhandled 'error' event. Here
 * every client gets a listener of its own from the moment it connects, for its whole life; the pool drops a
 * broken client when it is released, and the next checkout connects a new one.
 */

/** Asking the pool for a connection failed: the database is down, refusing, or too slow to answer. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
  constructor(cause: unknown) {
    super(`the database is unreachable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** How long connecting to the database may take before a request is told it is unavailable. */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * SQLSTATEs of a connection that is gone or not available (PostgreSQL, Appendix A): class 08 (connection
 * exception), 57P01-57P05 (admin shutdown, crash shutdown, cannot connect now, database dropped, idle session
 * timeout), 53300 (too many connections), 55000 at connect (the database does not allow connections).
 */
const LOST_CONNECTION = /^(08...|57P0[1-5]|53300)$/;
const NODE_NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** node-pg's own messages for a client whose connection ended (client.js). */
const PG_CLIENT_GONE =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout)/;

/** Is `err` a PostgreSQL connection that is lost or cannot be had (rather than a failure of the query)? */
export function isDatabaseConnectionFault(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && (LOST_CONNECTION.test(e.code) || NODE_NETWORK_ERRORS.has(e.code))) return true;
  return typeof e.message === 'string' && PG_CLIENT_GONE.test(e.message);
}

export interface PgConnectionFaults {
  /** what Kysely gets as its pool: connection failures come out as DatabaseUnavailableError */
  pool: Pick<pg.Pool, 'connect' | 'end'>;
  /** who hears of lost connections (server.ts and worker.ts log them); without one they are only absorbed */
  onError(listener: (err: Error) => void): void;
}

/** Every client of `pool` listened to from its connect on (see above), and its checkouts bounded. */
export function watchPgConnections(pool: pg.Pool): PgConnectionFaults {
  let listener: (err: Error) => void = () => undefined;
  const report = (err: Error): void => listener(err);
  pool.on('connect', (client) => {
    client.on('error', report);
  });
  // An idle client's error reaches the pool too (and its own listener above): nothing more to do here.
  pool.on('error', () => undefined);
  return {
    pool: {
      connect: (() =>
        pool.connect().catch((err: unknown) => {
          throw new DatabaseUnavailableError(err);
        })) as pg.Pool['connect'],
      end: () => pool.end(),
    },
    onError(l) {
      listener = l;
    },
  };
}
