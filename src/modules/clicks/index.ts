/**
 * The clicks module's public face: other modules, app.ts and worker.ts import from here only. It owns the
 * whole click pipeline: what a visit is (event/), how clicks travel (transport/, chosen once in
 * click-ingest.ts), what a batch writes (rollups/), and the reads: statistics (stats/) and click records
 * (records/).
 */
export { isBotUserAgent } from './event/bot.js';
export { buildClickEvent, type ClickEvent, type VisitFacts } from './event/click-event.js';
export { createVisitContext, openGeoipDatabase, visitorSalt, type DescribeVisit } from './event/visit-context.js';
export type { ClickQueue } from './transport/memory-click-queue.js';
export type { ClickWriter } from './rollups/click-writer.js';
export { clickJournalDir, isJournalSegment } from './transport/click-journal.js';
export { createClickPipeline, type ClickPipeline, type ClickPipelineDeps } from './click-ingest.js';
export { createClickStreamConsumer } from './transport/click-stream-consumer.js';
export { createReplaySafeClickWriter } from './rollups/replay-safe-click-writer.js';
export { createClicksRepository, type ClicksRepository } from './rollups/pg-click-writer.js';
export { clicksModuleSchemas, createClicksModule } from './clicks.module.js';
export type { LinkAccess } from './link-access.js';
