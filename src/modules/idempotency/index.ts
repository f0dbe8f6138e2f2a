/**
 * The idempotency module's public face, for the wiring: its service implements the HTTP plugin's port
 * (plugins/idempotency.ts, IdempotencyKeys), which app.ts hands it to.
 */
export { createIdempotencyRepository } from './idempotency.repository.js';
export { createIdempotencyService, type IdempotencyService } from './idempotency.service.js';
export { createIdempotencyModule } from './idempotency.module.js';
