/**
 * The clicks module's public face: other modules, app.ts and worker.ts import from here only. It owns the
 * whole click pipeline: what a visit is (event/), how clicks travel (transport/, chosen once in
 * click-ingest.ts), what a batch writes (rollups/), and the reads: statistics (stats/) and click records
 * (records/).
 */
export {
  buildClickEvent,
  clickRecord,
  CLICK_TEXT_LIMITS,
  type ClickEvent,
  type VisitFacts,
  type VisitorFacts,
} from './event/click-event.js';
export { UserAgentCache, type UserAgentFacts } from './event/user-agent.js';
export {
  createAddressRecorder,
  createCountryLookup,
  openGeoipDatabase,
  visitorSalt,
  type CountryLookup,
  type RecordAddress,
} from './event/visit-context.js';
export type { ClickSink, ClickSinkStatus } from './transport/click-sink.js';
export { clickJournalDir, isJournalSegment } from './transport/journal-segments.js';
export type { ImportedVisitsThread } from './rollups/sqlite-import-writer.js';
export {
  createClickIngest,
  importOnlyClickIngest,
  importedVisitsWriter,
  startClickWorker,
  type ClickIngest,
  type ClickIngestDeps,
} from './click-ingest.js';
export { clicksModuleSchemas, createClicksModule } from './clicks.module.js';
export type { LinkAccess } from './link-access.js';
