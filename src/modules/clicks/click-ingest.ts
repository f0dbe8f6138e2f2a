import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import { embeddedDatabaseFile, isEmbedded, type Storage } from '../../db/database.js';
import type { Redis } from '../../infra/redis.js';
import type { RedisTurn } from '../../infra/redis-turn.js';
import type { Clock } from '../../lib/clock.js';
import { appModule } from '../../app-module.js';
import { ClickBatch } from './rollups/click-batch.js';
import type { ClickWriter } from './rollups/click-writer.js';
import { createPgClickWriter, type PgClickWriter } from './rollups/pg-click-writer.js';
import { createReplaySafeClickWriter } from './rollups/replay-safe-click-writer.js';
import { createSqliteClickWriter } from './rollups/sqlite-click-writer.js';
import { createImportedVisitsWriter } from './rollups/sqlite-rollup-writer.js';
import { createImportedVisitsThread, type ImportedVisitsThread } from './rollups/sqlite-import-writer.js';
import { journaledClickQueue, openClickJournal, type ClickJournal } from './transport/click-journal.js';
import { clickJournalDir } from './transport/journal-segments.js';
import type { ClickSink } from './transport/click-sink.js';
import { createClickStreamConsumer, type ClickStreamConsumer } from './transport/click-stream-consumer.js';
import { createMemoryClickQueue } from './transport/memory-click-queue.js';
import { createRedisClickQueue } from './transport/redis-click-queue.js';

type IngestConfig = Pick<
  Config,
  | 'dataDir'
  | 'clickJournal'
  | 'clickFlushMs'
  | 'clickBatchSize'
  | 'clickQueueLimit'
  | 'clickClaimIdleMs'
  | 'clickWorkerInProcess'
>;
type IngestStorage = Pick<Storage, 'db' | 'dialect' | 'sqlite' | 'checkpointer'>;

/** The scale-out setup's Redis: the client, the redirect's turn on it (shared-state.ts) and the key prefix. */
export interface IngestRedis {
  client: Redis;
  turn: RedisTurn;
  prefix: string;
}

export interface ClickIngestDeps {
  config: IngestConfig;
  storage: IngestStorage;
  /** REDIS_URL's; null: clicks stay in this process */
  redis: IngestRedis | null;
  log: FastifyBaseLogger;
  clock: Clock;
}

/** The writer of this storage, and how to stop it (after the last flush, before the database closes). */
export interface StorageWriter {
  writer: ClickWriter;
  /** exactly once by the clicks' keys (the stream's redeliveries, the journal's keyed lines) */
  replaySafe(): ClickWriter;
  close(): Promise<void>;
}

/**
 * The embedded engine's writer thread (sqlite-click-writer.ts), or the PostgreSQL writer: what every sink
 * writes through (and what tests and bench/ seed large data sets with).
 */
export function clickWriterFor(storage: IngestStorage): StorageWriter {
  const file = embeddedDatabaseFile(storage);
  // The writer thread runs the WAL checkpoints too, in place of a thread of their own (sqlite-checkpointer.ts).
  const thread = file === null ? null : createSqliteClickWriter(file, { checkpoints: storage.checkpointer });
  const writer = thread ?? createPgClickWriter(storage);
  // The stream's clicks carry keys: a batch may commit in parts (pg-click-parts.ts), each click still counted once.
  const keyed = thread ?? createPgClickWriter(storage, { parts: true });
  return {
    writer,
    replaySafe: () => createReplaySafeClickWriter({ db: storage.db, dialect: storage.dialect, writer: keyed }),
    close: async () => thread?.close(),
  };
}

/**
 * The ONE place that decides how a click travels (SPEC §12, docs/deployment.md), as the clicks' own app
 * module: it creates the sink the redirect enqueues into, and closes it (every queued click written before the
 * database closes).
 * - PostgreSQL with Redis (scale-out): the Redis stream (transport/redis-click-queue.ts), consumed by `npm run
 *   worker` (startClickWorker below) and, unless CLICK_WORKER_IN_PROCESS=false, by this instance too; written
 *   through the replay-safe writer.
 * - the embedded engine: the in-process queue, written by the writer thread, behind the journal in DATA_DIR
 *   (transport/click-journal.ts; CLICK_JOURNAL=false turns it off). The database is one machine's file anyway.
 * - PostgreSQL without Redis: the in-process queue (clicks queued in memory are lost if the process is killed).
 */
export async function createClickIngest(deps: ClickIngestDeps) {
  const { config, storage, redis } = deps;
  const writing = clickWriterFor(storage);
  const embedded = isEmbedded(storage);
  let sink: ClickSink;
  try {
    if (redis && !embedded) sink = await streamSink(deps, redis, writing);
    else if (embedded && config.clickJournal) sink = await journaledSink(deps, writing);
    else sink = memorySink(deps, writing.writer);
  } catch (err) {
    await writing.close(); // its writer thread: a start that fails here leaves nothing running
    throw err;
  }
  return appModule({
    schemas: [],
    sink,
    writeImported: importedVisitsWriter(storage),
    // A server's import shares the write lock with its traffic: its visits go in short transactions of its own.
    importedVisitsThread: null,
    async close() {
      await sink.close();
      await writing.close();
    },
  });
}

export type ClickIngest = Awaited<ReturnType<typeof createClickIngest>>;

function memorySink(
  { config, log, clock }: ClickIngestDeps,
  writer: ClickWriter,
  journal?: Pick<ClickJournal, 'id' | 'written' | 'replaying'>,
) {
  return createMemoryClickQueue({
    writer,
    flushMs: config.clickFlushMs,
    batchSize: config.clickBatchSize,
    limit: config.clickQueueLimit,
    log: log.child({ component: 'click-queue' }),
    clock,
    ...(journal
      ? { onWritten: (n: number) => journal.written(n), journal: journal.id, holdFresh: () => journal.replaying() }
      : {}),
  });
}

function streamSink(
  { config, log, clock }: ClickIngestDeps,
  redis: IngestRedis,
  writing: StorageWriter,
): Promise<ClickSink> {
  return createRedisClickQueue({
    redis: redis.client,
    turn: redis.turn,
    prefix: redis.prefix,
    writer: writing.replaySafe(),
    flushMs: config.clickFlushMs,
    batchSize: config.clickBatchSize,
    limit: config.clickQueueLimit,
    claimIdleMs: config.clickClaimIdleMs,
    inProcessConsumer: config.clickWorkerInProcess,
    log: log.child({ component: 'click-stream' }),
    clock,
  });
}

/** The embedded default: clicks are journaled in DATA_DIR before the redirect answers (SPEC §12). */
async function journaledSink(deps: ClickIngestDeps, writing: StorageWriter): Promise<ClickSink> {
  const { db } = deps.storage;
  const journal = await openClickJournal({
    dir: clickJournalDir(deps.config.dataDir),
    log: deps.log.child({ component: 'click-journal' }),
    committed: async (id) => {
      const mark = await db.selectFrom('click_journal_marks').selectAll().where('journal', '=', id).executeTakeFirst();
      const w =
        mark?.window_end == null
          ? null
          : { end: Number(mark.window_end), link: Number(mark.window_link), count: Number(mark.window_count) };
      return { committed: Number(mark?.committed ?? 0), window: w };
    },
    replay: (clicks, mark) => writing.writer.writeBatch!(ClickBatch.of(clicks), mark),
    replayKeyed: (clicks) => writing.replaySafe().write(clicks),
    forgetMarks: async (keep) =>
      void (await db.deleteFrom('click_journal_marks').where('journal', '!=', keep).execute()),
  });
  return journaledClickQueue(memorySink(deps, writing.writer, journal), journal);
}

/**
 * How an import writes the visits it brings over (SPEC §20): inside the importer's own transaction with their
 * link, marked imported; on the embedded engine through the writer thread's statements on the main connection
 * (sqlite-rollup-writer.ts), on PostgreSQL through its writer.
 */
export function importedVisitsWriter(
  storage: Pick<Storage, 'db' | 'dialect' | 'sqlite'>,
): PgClickWriter['writeImported'] {
  return storage.sqlite === null
    ? createPgClickWriter(storage).writeImported
    : createImportedVisitsWriter(storage.sqlite);
}

/**
 * The clicks' part of a process that serves nothing beside its imports (the CLI): no queue, the writer of
 * imported visits inside the import's transaction, and on the embedded engine a run's visits written by a thread
 * of their own while the run reads on (rollups/sqlite-import-writer.ts): its transactions may follow each other
 * with no traffic to let in between. That thread is null on PostgreSQL.
 */
export function importOnlyClickIngest(storage: Pick<Storage, 'db' | 'dialect' | 'sqlite'>) {
  const file = embeddedDatabaseFile(storage);
  return {
    schemas: [],
    sink: null,
    writeImported: importedVisitsWriter(storage),
    importedVisitsThread: file === null ? null : (): ImportedVisitsThread => createImportedVisitsThread(file),
  };
}

/**
 * `npm run worker` (worker.ts): a consumer of the Redis stream writing to PostgreSQL through the replay-safe
 * writer, the same as an API instance's in-process consumer.
 */
export function startClickWorker(
  deps: Omit<ClickIngestDeps, 'redis'> & { redis: Omit<IngestRedis, 'turn'> },
): ClickStreamConsumer {
  const { config } = deps;
  const consumer = createClickStreamConsumer({
    redis: deps.redis.client,
    prefix: deps.redis.prefix,
    writer: clickWriterFor(deps.storage).replaySafe(),
    batchSize: config.clickBatchSize,
    flushMs: config.clickFlushMs,
    claimIdleMs: config.clickClaimIdleMs,
    log: deps.log,
    clock: deps.clock,
  });
  consumer.start();
  return consumer;
}
