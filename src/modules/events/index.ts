/**
 * The events module's public face (SPEC §22): the live stream, the message bus and the sweep, for the composition
 * root. The events themselves are written by each module in its own transactions through db/events.ts.
 */
export { createEventsModule, type EventsBusDeps, type EventsModule } from './events.module.js';
export { eventWebhooks, PublicEventSchema } from './events.schemas.js';
