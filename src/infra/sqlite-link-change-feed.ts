import type SQLite from 'better-sqlite3';
import type { FastifyBaseLogger } from 'fastify';
import { applyChange, type ChangeFeedCache } from './pg-link-cache-bus.js';

export interface SqliteLinkChangeFeedOptions {
  /** the server's connection to the embedded database */
  sqlite: SQLite.Database;
  cache: Pick<ChangeFeedCache, 'forget' | 'forgetMisses'>;
  log: FastifyBaseLogger;
  /** how often `link_changes` is read: the bound on how long a change made by another process goes unseen */
  intervalMs?: number;
}

const INTERVAL_MS = 250;
const ROWS_PER_READ = 1_000;

/**
 * The redirect cache's view of link changes made by another process on the embedded database: the `ferry` CLI
 * (an import, a link disabled) writes beside the running server. The server makes every other change itself and
 * drops the code from its cache then, so it caches a link for good and a miss for seconds; a change it did not
 * make would otherwise wait for eviction (a link) or the miss's expiry. The CLI leaves each change's message
 * in `link_changes` in the change's own transaction (db/dialect.ts `notify`); this reads the rows past the
 * last one it saw every `intervalMs` (an index search; nothing when there is nothing new) and applies them
 * as PostgreSQL's NOTIFY messages are applied (`<origin> <code>`, or `+`: codes were added).
 *
 * So a visit sees another process's change at most `intervalMs` (plus one read) after its commit. Rows are
 * only read here: the server never waits for the write lock a running import holds. The writers drop old
 * rows (LINK_CHANGES_KEPT_MS). A read never runs inside a transaction of the server's own (it would see
 * that transaction's rows): it waits for the next tick.
 */
export function startSqliteLinkChangeFeed(opts: SqliteLinkChangeFeedOptions): { close(): void } {
  const { sqlite, cache, log } = opts;
  const newer = sqlite.prepare<[number, number], { seq: number; message: string }>('select seq, message from link_changes where seq > ? order by seq limit ?');
  // What was announced before the server started needs no applying: its cache started empty.
  let last = (sqlite.prepare('select coalesce(max(seq), 0) as seq from link_changes').get() as { seq: number }).seq;
  let failing = false;
  const read = () => {
    if (sqlite.inTransaction) return;
    try {
      for (let rows = newer.all(last, ROWS_PER_READ); rows.length > 0; rows = rows.length === ROWS_PER_READ ? newer.all(last, ROWS_PER_READ) : []) {
        for (const row of rows) {
          const space = row.message.indexOf(' ');
          if (space > 0) applyChange(cache, row.message.slice(space + 1));
          last = row.seq;
        }
      }
      failing = false;
    } catch (err) {
      if (!failing) log.warn({ err }, 'link changes of other processes could not be read; the redirect cache may miss them until it can');
      failing = true;
    }
  };
  const timer = setInterval(read, opts.intervalMs ?? INTERVAL_MS);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
