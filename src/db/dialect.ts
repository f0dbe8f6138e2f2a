import type { ColumnDefinitionBuilder, CreateTableBuilder, Expression, Kysely, RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';

/**
 * The one place that knows which engine runs. Everything else in Ferry writes portable Kysely; where SQLite
 * and PostgreSQL need different SQL, the difference is a function here.
 */
export type DialectName = 'sqlite' | 'postgres';

export interface Dialect {
  name: DialectName;
  /** A 64-bit, never-reused, database-generated primary key. */
  addIdColumn<T extends string>(table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'>;
  /** The type for an integer that may exceed 2^31 (millisecond timestamps, counters). */
  bigint: 'bigint' | 'integer';
  /** Is this driver error a unique-constraint violation? */
  isUniqueViolation(err: unknown): boolean;
  /** Unique-violation's constraint or column names, as far as the driver tells them. */
  uniqueViolationTarget(err: unknown): string;
  /** A varchar compared byte for byte (short codes: `a` and `A` are different codes, also in unique indexes). */
  caseSensitiveString(length: number): Expression<unknown>;
  /**
   * A table stored in its primary-key B-tree (SQLite WITHOUT ROWID) instead of a rowid table plus a unique
   * index: one B-tree to touch per upsert instead of two. PostgreSQL has no such choice; unchanged there.
   */
  clusteredByPrimaryKey<T extends string, C extends string>(table: CreateTableBuilder<T, C>): CreateTableBuilder<T, C>;
  /** A random 128-bit identifier (click keys): PostgreSQL's 16-byte `uuid`, text on SQLite. */
  uuid: 'uuid' | 'varchar(36)';
  /**
   * Declarative range partitioning (PostgreSQL): the click table is partitioned by month of `clicked_at`
   * (db/click-partitions.ts). SQLite has none; its click table stays one table.
   */
  rangePartitioning: boolean;
  /**
   * `column` contains `needle` as a substring, ignoring ASCII case (PostgreSQL `ilike`, SQLite `like`), with
   * the needle's `%`, `_` and `\\` matched literally.
   */
  containsIgnoringCase(column: string, needle: string): RawBuilder<SqlBool>;
  /**
   * Some column of `columns` contains `needle`, ignoring ASCII case, as containsIgnoringCase does: the same answers,
   * in the form cheapest to test on rows read one by one (a scan of the table, or candidates read by their ids),
   * which no index serves. PostgreSQL's `ilike` lowers the text and the pattern anew for every row (a million
   * titles: 0.4 µs each, against 0.1 for a `like` and 0.3 for `lower(title) like …`): here the columns are first
   * tested as they are, with the needle as given and ASCII-lowered (a URL holding `example.com` matches at once),
   * then as `lower(column) like lower(pattern)`, which is what `ilike` computes on UTF-8. SQLite:
   * containsIgnoringCase of each column.
   */
  anyContainsIgnoringCase(columns: readonly string[], needle: string): RawBuilder<SqlBool>;
  /**
   * A message to every instance listening on `channel`, sent when (and only if) the surrounding transaction
   * commits: PostgreSQL's NOTIFY, the outbox's wake-up (db/outbox.ts). SQLite has no such thing across
   * processes: its consumers read the outbox every few hundred milliseconds (infra/outbox-feed.ts); in this
   * process the message goes to onLocalNotify's listeners.
   */
  notify(db: Kysely<any>, channel: string, payload: string): Promise<void>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * SQLite: hears this process's notify on `channel` at once, inside the writing transaction. A listener that
   * reads through Kysely waits for that transaction to end (one connection, one transaction at a time), so it
   * reads what committed. PostgreSQL: hears nothing (a LISTEN connection hears the NOTIFY after the commit,
   * infra/pg-wake-up.ts). Answers the listener's removal.
   */
  onLocalNotify(channel: string, listener: () => void): () => void;
  /**
   * For the rest of the surrounding transaction, plan joins that look up a few rows of a large table by key as
   * index lookups. PostgreSQL's default random_page_cost (4, for spinning disks) made the click writer's
   * `update links … from (values …)` of 1,000 links a hash join over a sequential scan of every link: 35 ms
   * against 8 ms with 1.1 (the usual setting for SSDs), set for the transaction only. SQLite: nothing to do.
   */
  preferIndexLookups(tx: Kysely<any>): Promise<void>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * For the rest of the surrounding transaction, read an ordered query with a LIMIT through an index that gives its
   * order, stopping at the limit, rather than gather every match and sort it. PostgreSQL plans from statistics
   * taken when a queue was calm: after a burst of 10,000 webhook deliveries it still expected five, and each claim
   * of 32 read and sorted all 10,000 (12 ms); set for the transaction only. SQLite: nothing to do.
   */
  readInIndexOrder(tx: Kysely<any>): Promise<void>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * The surrounding transaction's commit does not wait for the disk (PostgreSQL `synchronous_commit = off` for it
   * alone): a crash may lose the last such commits, never half of one, and never anyone else's. Only for writes
   * that are made again when lost — a webhook attempt's lease runs out and the attempt is made again (at least
   * once). SQLite: nothing to do (its commits in WAL mode with synchronous=NORMAL do not wait for the disk).
   */
  commitWithoutWaitingForDisk(tx: Kysely<any>): Promise<void>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * The rows a query inside a transaction reads stay locked until it ends (PostgreSQL `FOR UPDATE`), so a
   * check on them holds until the write that depends on it commits. SQLite: nothing to add, every write
   * transaction here takes the database's write lock first (BEGIN IMMEDIATE, db/database.ts).
   */
  lockRows<Q extends { forUpdate(): Q }>(query: Q): Q;
  /**
   * Like lockRows, but rows another transaction holds are passed over rather than waited for (PostgreSQL
   * `FOR UPDATE SKIP LOCKED`): several instances claiming work from one queue (webhook deliveries) each take
   * other rows. SQLite: nothing to add, its write transactions run one at a time.
   */
  lockRowsSkippingLocked<Q extends { forUpdate(): Q; skipLocked(): Q }>(query: Q): Q;
}

/** A LIKE pattern that finds `needle` anywhere, its wildcards escaped (used with `escape '\\'`). */
export const containsPattern = (needle: string): string => `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function createDialect(name: DialectName): Dialect {
  return name === 'postgres' ? postgresDialect() : sqliteDialect();
}

function postgresDialect(): Dialect {
  return {
    name: 'postgres',
    addIdColumn: (t) =>
      t.addColumn('id', 'bigint', (c: ColumnDefinitionBuilder) => c.primaryKey().generatedByDefaultAsIdentity()),
    bigint: 'bigint',
    isUniqueViolation: (err) => (err as { code?: string }).code === '23505',
    uniqueViolationTarget: (err) =>
      `${(err as { constraint?: string }).constraint ?? ''} ${(err as { detail?: string }).detail ?? ''}`,
    // "C": byte order and equality whatever the database's default collation is.
    caseSensitiveString: (length) => sql`varchar(${sql.raw(String(Math.trunc(length)))}) collate "C"`,
    clusteredByPrimaryKey: (table) => table,
    uuid: 'uuid',
    rangePartitioning: true,
    containsIgnoringCase: (column, needle) =>
      sql<SqlBool>`${sql.ref(column)} ilike ${containsPattern(needle)} escape '\\'`,
    anyContainsIgnoringCase: (columns, needle) => {
      const pattern = containsPattern(needle);
      const patterns = [...new Set([pattern, pattern.replace(/[A-Z]+/g, (s) => s.toLowerCase())])];
      const literal = patterns.flatMap((p) => columns.map((c) => sql<SqlBool>`${sql.ref(c)} like ${p} escape '\\'`));
      const lowered = columns.map((c) => sql<SqlBool>`lower(${sql.ref(c)}) like lower(${pattern}::text) escape '\\'`);
      return sql<SqlBool>`(${sql.join([...literal, ...lowered], sql` or `)})`;
    },
    notify: async (db, channel, payload) => {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },
    onLocalNotify: () => () => undefined,
    preferIndexLookups: async (tx) => {
      await sql`set local random_page_cost = 1.1`.execute(tx);
    },
    commitWithoutWaitingForDisk: async (tx) => {
      await sql`set local synchronous_commit = off`.execute(tx);
    },
    readInIndexOrder: async (tx) => {
      await sql`select set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true)`.execute(
        tx,
      );
    },
    lockRows: (query) => query.forUpdate(),
    lockRowsSkippingLocked: (query) => query.forUpdate().skipLocked(),
  };
}

/** SQLite's LIKE ignores ASCII case unless told otherwise (PRAGMA case_sensitive_like, never set here). */
const likeIgnoringAsciiCase = (column: string, needle: string) =>
  sql<SqlBool>`${sql.ref(column)} like ${containsPattern(needle)} escape '\\'`;

function sqliteDialect(): Dialect {
  /** this process's listeners by channel (SQLite's only notifications) */
  const local = new Map<string, Set<() => void>>();
  return {
    name: 'sqlite',
    // AUTOINCREMENT: SQLite never hands out a deleted row's id again (a deleted user's id must not be reborn).
    addIdColumn: (t) => t.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement()),
    bigint: 'integer',
    isUniqueViolation: (err) => {
      const code = (err as { code?: string }).code;
      return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
    },
    uniqueViolationTarget: (err) => (err as Error).message ?? '',
    // BINARY is SQLite's default; spelled out so that nobody "fixes" it to NOCASE.
    caseSensitiveString: (length) => sql`varchar(${sql.raw(String(Math.trunc(length)))}) collate binary`,
    clusteredByPrimaryKey: (table) => table.modifyEnd(sql`without rowid`),
    uuid: 'varchar(36)',
    rangePartitioning: false,
    containsIgnoringCase: likeIgnoringAsciiCase,
    anyContainsIgnoringCase: (columns, needle) =>
      sql<SqlBool>`(${sql.join(
        columns.map((c) => likeIgnoringAsciiCase(c, needle)),
        sql` or `,
      )})`,
    notify: async (_db, channel) => {
      for (const listener of local.get(channel) ?? []) listener();
    },
    onLocalNotify: (channel, listener) => {
      const set = local.get(channel) ?? new Set();
      local.set(channel, set.add(listener));
      return () => set.delete(listener);
    },
    preferIndexLookups: async () => undefined,
    readInIndexOrder: async () => undefined,
    commitWithoutWaitingForDisk: async () => undefined,
    lockRows: (query) => query,
    lockRowsSkippingLocked: (query) => query,
  };
}
