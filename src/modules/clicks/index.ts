/**
 * The clicks module's public face: other modules, app.ts and worker.ts import from here only. It owns the
 * whole click pipeline: the event (click-event.ts), the queue choice (click-pipeline.ts: in-process or the
 * Redis stream), the writers and the one rollup implementation (click-rollups.ts), the statistics and the
 * click records.
 */
export { isBotUserAgent } from './bot.js';
export { buildClickEvent, type ClickEvent, type VisitFacts } from './click-event.js';
export { createVisitContext, openGeoipDatabase, visitorSalt, type DescribeVisit } from './visit-context.js';
export type { ClickQueue, ClickWriter } from './click-queue.js';
export { createClickPipeline, type ClickPipeline, type ClickPipelineDeps } from './click-pipeline.js';
export { createClickStreamConsumer } from './click-stream-consumer.js';
export { createReplaySafeClickWriter } from './replay-safe-click-writer.js';
export { createClicksRepository } from './clicks.repository.js';
export { clicksModuleSchemas, createClicksModule } from './clicks.module.js';
export type { LinkAccess } from './link-access.js';
