import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import { isEmbedded, type Storage } from '../../db/database.js';
import type { Redis } from '../../infra/redis.js';
import type { ClickQueueStats } from '../../infra/metrics.js';
import type { Clock } from '../../lib/clock.js';
import { ClickBatch } from './rollups/click-batch.js';
import { clickJournalDir, journaledClickQueue, openClickJournal, type ClickJournal } from './transport/click-journal.js';
import { createMemoryClickQueue, type ClickQueue } from './transport/memory-click-queue.js';
import type { ClickWriter } from './rollups/click-writer.js';
import { createClicksRepository, type ClicksRepository } from './rollups/pg-click-writer.js';
import { createRedisClickQueue } from './transport/redis-click-queue.js';
import { createReplaySafeClickWriter } from './rollups/replay-safe-click-writer.js';

export interface ClickPipelineDeps {
  config: Pick<Config, 'dataDir' | 'clickJournal' | 'clickFlushMs' | 'clickBatchSize' | 'clickQueueLimit' | 'clickClaimIdleMs' | 'clickWorkerInProcess'>;
  storage: Pick<Storage, 'db' | 'dialect' | 'sqlite'>;
  /** the scale-out setup's Redis (REDIS_URL); null: clicks stay in this process */
  redis: Redis | null;
  redisPrefix: string;
  log: FastifyBaseLogger;
  clock: Clock;
  /** another queue (tests); default: chosen below */
  queue?: ClickQueue;
}

export interface ClickPipeline {
  /** where the redirect puts clicks */
  queue: ClickQueue;
  /** records, rollups and the statistics' reads */
  repository: ClicksRepository;
  /** On app close: write every queued click, then stop the writer (before the database closes). */
  close(): Promise<void>;
  /** what /metrics shows of the pipeline */
  stats(): ClickQueueStats;
  /** the Redis stream's backlog and live consumers (/readyz); null without the stream */
  stream(): { backlog: number; consumers: number } | null;
}

/**
 * The one place that decides how a click travels (SPEC §12, docs/deployment.md):
 * - PostgreSQL with Redis (scale-out): a Redis stream, consumed by `npm run worker` and, unless
 *   CLICK_WORKER_IN_PROCESS=false, by this instance too; written through the replay-safe writer.
 * - the embedded engine: the in-process queue, written by the writer thread, behind the journal in DATA_DIR
 *   (click-journal.ts; CLICK_JOURNAL=false turns it off). The database is one machine's file anyway.
 * - PostgreSQL without Redis: the in-process queue (clicks queued in memory are lost if the process is killed).
 */
export async function createClickPipeline(deps: ClickPipelineDeps): Promise<ClickPipeline> {
  const { config, storage, clock } = deps;
  const repository = createClicksRepository(storage);
  const replaySafe = (): ClickWriter => createReplaySafeClickWriter({ db: storage.db, dialect: storage.dialect, writer: repository.writer });
  const memoryQueue = (journal?: Pick<ClickJournal, 'id' | 'written' | 'replaying'>): ClickQueue => createMemoryClickQueue({
    writer: repository.writer,
    flushMs: config.clickFlushMs,
    batchSize: config.clickBatchSize,
    limit: config.clickQueueLimit,
    log: deps.log.child({ component: 'click-queue' }),
    clock,
    ...(journal ? { onWritten: (n: number) => journal.written(n), journal: journal.id, holdFresh: () => journal.replaying() } : {}),
  });

  let queue: ClickQueue;
  if (deps.queue) queue = deps.queue;
  else if (deps.redis && !isEmbedded(storage)) {
    queue = await createRedisClickQueue({
      redis: deps.redis,
      prefix: deps.redisPrefix,
      writer: replaySafe(),
      flushMs: config.clickFlushMs,
      batchSize: config.clickBatchSize,
      limit: config.clickQueueLimit,
      claimIdleMs: config.clickClaimIdleMs,
      inProcessConsumer: config.clickWorkerInProcess,
      log: deps.log.child({ component: 'click-stream' }),
      clock,
    });
  } else if (isEmbedded(storage) && config.clickJournal) {
    // The embedded default: clicks are journaled in DATA_DIR before the redirect answers (SPEC §12).
    const { db } = storage;
    const journal = await openClickJournal({
      dir: clickJournalDir(config.dataDir),
      log: deps.log.child({ component: 'click-journal' }),
      committed: async (id) => {
        const mark = await db.selectFrom('click_journal_marks').selectAll().where('journal', '=', id).executeTakeFirst();
        const w = mark?.window_end == null ? null : { end: Number(mark.window_end), link: Number(mark.window_link), count: Number(mark.window_count) };
        return { committed: Number(mark?.committed ?? 0), window: w };
      },
      replay: (clicks, mark) => repository.writer.writeBatch!(ClickBatch.of(clicks), mark),
      replayKeyed: (clicks) => replaySafe().write(clicks),
      forgetMarks: async (keep) => void (await db.deleteFrom('click_journal_marks').where('journal', '!=', keep).execute()),
    }).catch(async (err: unknown) => {
      await repository.close(); // its writer thread: a start that fails here leaves nothing running
      throw err;
    });
    queue = journaledClickQueue(memoryQueue(journal), journal);
  } else queue = memoryQueue();

  return {
    queue,
    repository,
    stats: () => ({
      depth: queue.depth(), dropped: queue.dropped(), lastFlushAt: queue.lastFlushAt(), fellBack: queue.fellBack?.() ?? 0, stream: queue.stream?.() ?? null,
      journalReplaying: queue.replaying?.() ?? false,
    }),
    stream: () => queue.stream?.() ?? null,
    async close() {
      await queue.close();
      await repository.close();
    },
  };
}
