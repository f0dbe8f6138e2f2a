/** The idempotency module's public face: the HTTP plugin (plugins/idempotency.ts) and the wiring import from here. */
export { requestFingerprint } from './fingerprint.js';
export { createIdempotencyRepository } from './idempotency.repository.js';
export { createIdempotencyService, type IdempotencyClaim, type IdempotencyService, type StoredResponse } from './idempotency.service.js';
export { createIdempotencyModule } from './idempotency.module.js';
