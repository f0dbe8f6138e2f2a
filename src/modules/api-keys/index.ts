/** The API keys module's public face, for the wiring and the CLI (`ferry keys`). */
export { createApiKeysModule } from './api-keys.module.js';
export { ApiKeyCreateSchema, type ApiKey } from './api-keys.schemas.js';
