import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { FastStatements } from '../../db/database.js';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import type { UsersRepository } from '../users/index.js';
import { apiKeyHasher } from './api-key-secret.js';
import { createApiKeysRepository } from './api-keys.repository.js';
import { apiKeysRoutes } from './api-keys.routes.js';
import { apiKeySchemas } from './api-keys.schemas.js';
import { createApiKeysService } from './api-keys.service.js';
import { createLastUsedTracker } from './last-used.js';

/** How often the keys' last uses noted in memory are written (`last_used_at` without a write per request). */
const LAST_USED_EVERY_MS = 10_000;

/**
 * API keys (SPEC §14): the service (the auth plugin authenticates through it), the routes, the job that writes
 * last uses, and a last write of them when the app closes. Keys are stored as an HMAC under a key derived
 * from (not equal to) the token key.
 */
export function createApiKeysModule(deps: {
  db: Kysely<Database>;
  dialect: Pick<Dialect, 'notify'>;
  /** the embedded engine's prepared statements (db/database.ts); null or absent: Kysely only */
  fast?: FastStatements | null;
  users: Pick<UsersRepository, 'findById'>;
  jwtSecret: Uint8Array;
  clock: Clock;
  paginator: Paginator;
  log: FastifyBaseLogger;
}) {
  const repository = createApiKeysRepository(deps.db, deps.paginator, deps.dialect, deps.fast ?? null);
  const apiKeys = createApiKeysService({
    keys: repository,
    users: deps.users,
    hash: apiKeyHasher(createHash('sha256').update('ferry-api-key:').update(deps.jwtSecret).digest()),
    lastUsed: createLastUsedTracker((uses) => repository.recordUses(uses)),
    clock: deps.clock,
    paginator: deps.paginator,
  });
  return appModule({
    apiKeys,
    schemas: apiKeySchemas,
    apiRoutes: async (api, { basePath, version }) => {
      await api.register(apiKeysRoutes, { apiKeys, basePath, version });
    },
    // The last uses this process remembers: every instance flushes its own.
    jobs: [
      {
        name: 'api-key-last-used',
        everyMs: LAST_USED_EVERY_MS,
        run: () => apiKeys.flushLastUsed(),
        perInstance: true,
      },
    ],
    close: async () => {
      await apiKeys
        .flushLastUsed()
        .catch((err: unknown) => deps.log.error({ err }, 'could not record the last use of API keys'));
    },
  });
}
