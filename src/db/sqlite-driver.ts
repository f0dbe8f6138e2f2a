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
 * Both have the same API; the types are 12.x's (@types/better-sqlite3).
 */
const SQLITE_DRIVER_PACKAGE = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

/** `new SqliteDatabase(file, options)`: better-sqlite3's Database constructor from the chosen package. */
export const SqliteDatabase = require(SQLITE_DRIVER_PACKAGE) as typeof BetterSqlite3;
