import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  SelectQueryNode,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';

/** How long a statement of the main connection may wait for the write lock in all (its busy_timeout). */
export const MAIN_BUSY_TIMEOUT_MS = 5_000;
/** The longest pause between two tries for the lock (the waits double from 1 ms up to it). */
const MAX_PAUSE_MS = 8;

type Handle = Pick<SQLite.Database, 'pragma' | 'inTransaction'>;

const isBusy = (err: unknown): boolean => String((err as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY');

/**
 * The main connection's writes wait for the write lock without holding the event loop. The click writer thread
 * holds that lock for tens of milliseconds at a time (a batch's transaction), and better-sqlite3 is synchronous:
 * under busy_timeout a write that found the lock taken blocked every request of the process until the lock came
 * free — the redirect's profile showed BEGIN IMMEDIATE and the job runner's lease upserts at up to 530 ms each.
 * Here a statement that takes the lock (anything but a SELECT, outside a transaction: a transaction's BEGIN
 * IMMEDIATE, an upsert) is tried without waiting (busy_timeout 0 for that one call) and, while the lock is taken,
 * tried again after a pause of 1, 2, 4 … 8 ms on a timer, up to MAIN_BUSY_TIMEOUT_MS in all, then fails as before
 * (SQLITE_BUSY: a 503). Inside a transaction the lock is already held (BEGIN IMMEDIATE), and a SELECT in WAL mode
 * never waits for it. Direct users of the handle keep busy_timeout as it is.
 */
class PatientConnection implements DatabaseConnection {
  constructor(
    private readonly inner: DatabaseConnection,
    private readonly sqlite: Handle,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.sqlite.inTransaction || SelectQueryNode.is(query.query)) return this.inner.executeQuery<R>(query);
    const deadline = performance.now() + MAIN_BUSY_TIMEOUT_MS;
    for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
      this.sqlite.pragma('busy_timeout = 0');
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (err) {
        if (!isBusy(err) || performance.now() + pause > deadline) throw err;
      } finally {
        this.sqlite.pragma(`busy_timeout = ${MAIN_BUSY_TIMEOUT_MS}`);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/**
 * Every Kysely transaction on the embedded engine starts with BEGIN IMMEDIATE, taking the write lock first.
 * A deferred BEGIN reads from a snapshot and asks for the lock at its first write; if the click writer thread
 * committed in between, that write fails at once with SQLITE_BUSY_SNAPSHOT ("database is locked"), which
 * busy_timeout does not retry (https://www.sqlite.org/rescode.html#busy_snapshot). Taken first, the lock is
 * waited for (PatientConnection) like any other, and the snapshot is never stale. Ferry's transactions are all
 * writes, so nothing is lost by it.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  #patient: PatientConnection | undefined;
  constructor(
    config: ConstructorParameters<typeof SqliteDriver>[0],
    private readonly sqlite: Handle,
  ) {
    super(config);
  }

  /** The one connection, its writes made patient (PatientConnection). */
  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    return (this.#patient ??= new PatientConnection(connection, this.sqlite));
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * SQLite ends a transaction itself on some errors (SQLITE_FULL, an I/O error: "automatically rolled back"); a
   * ROLLBACK then fails with "no transaction is active", which would stand in for the error that ended it (a
   * full disk's 503 became a 500).
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } catch (err) {
      if (!/no transaction is active/.test((err as Error).message)) throw err;
    }
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: ConstructorParameters<typeof SqliteDialect>[0];
  readonly #sqlite: Handle;
  constructor(config: ConstructorParameters<typeof SqliteDialect>[0], sqlite: Handle) {
    super(config);
    this.#config = config;
    this.#sqlite = sqlite;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#sqlite);
  }
}
