/**
 * The outbox module's public face: its sweep, for app.ts. The outbox itself (its events, how they are written
 * and read) is db/outbox.ts, below every module, so that each writes its events without depending on this one.
 */
export { createOutboxModule } from './outbox.module.js';
