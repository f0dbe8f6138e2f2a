import { createRequire } from 'node:module';
import type PgModule from 'pg';

type Pg = typeof PgModule;

let loaded: Pg | null = null;

/**
 * node-postgres, loaded by the first PostgreSQL connection of the process: an embedded instance (and every
 * `ferry` command on one) never loads it, which saves a start about 45 ms of CPU. Synchronous (`require`: pg is
 * CommonJS), so that opening the storage stays synchronous.
 */
export function pgDriver(): Pg {
  if (loaded !== null) return loaded;
  const pg = createRequire(import.meta.url)('pg') as Pg;
  // int8 (bigint) columns hold ids and millisecond timestamps, all below 2^53: read them as JS numbers.
  pg.types.setTypeParser(20, (v) => Number(v));
  loaded = pg;
  return pg;
}
