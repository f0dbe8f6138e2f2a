import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

/**
 * The embedded engine's driver, chosen by the Node version that runs (docs/operating.md, "Node.js versions"):
 * - Node 20: better-sqlite3 12.x, compiled at install against this Node's headers. 13.x segfaults here.
 * - Node 22 and later: better-sqlite3 13.x (installed as `better-sqlite3-napi`), built on Node-API and shipped
 *   prebuilt, so nothing compiles. 12.x aborts on Node 24 when a statement is collected after its thread's
 *   environment is gone (`RemoveEnvironmentCleanupHook … (env) != nullptr`, WiseLibs/better-sqlite3#1515):
 *   the click writer's and the checkpointer's threads met it at every exit.
 * Both have the same API; the types are 12.x's (@types/better-sqlite3). 13.x is an optional dependency: npm skips
 * it (quietly, engines `>=22`) on Node 20, so an install made on Node 20 lacks it under Node 22 and later until
 * `npm ci` (or `npm install`) runs there.
 */
const SQLITE_DRIVER_PACKAGE =
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

function loadDriver(): typeof BetterSqlite3 {
  try {
    return require(SQLITE_DRIVER_PACKAGE) as typeof BetterSqlite3;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const missing = code === 'MODULE_NOT_FOUND' && String(error).includes(`'${SQLITE_DRIVER_PACKAGE}'`);
    if (!missing) throw error;
    throw new Error(
      `The embedded database's driver for Node ${process.versions.node} (${SQLITE_DRIVER_PACKAGE}) is not installed: ` +
        'the dependencies were installed under another Node version; run `npm ci` (or `npm install`) with this one',
      { cause: error },
    );
  }
}

/** `new SqliteDatabase(file, options)`: better-sqlite3's Database constructor from the chosen package. */
export const SqliteDatabase = loadDriver();
