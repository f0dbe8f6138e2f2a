import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import { createStorage, type Storage } from '../db/database.js';
import { migrateToLatest } from '../db/migrator.js';
import type { Caller } from '../lib/caller.js';
import { systemClock } from '../lib/clock.js';
import { deploymentPaginator } from '../lib/pagination.js';
import { createApiKeysModule } from '../modules/api-keys/index.js';
import { loadBlockedHosts, type BlockedHosts } from '../infra/blocked-hosts-file.js';
import { clearBlockedFallbacks } from '../modules/domains/index.js';
import { openLinkModeration, type LinkModeration } from '../modules/links/index.js';
import { loadJwtSecret } from '../modules/tokens/index.js';
import { createUsersModule } from '../modules/users/index.js';

/**
 * The services the CLI works through, built as app.ts builds them (the same factories, the same
 * configuration), so that every rule the API enforces holds for the operator too. No HTTP server, no click
 * pipeline: the CLI changes accounts, keys and links, and never serves a visit.
 */
export interface CliServices {
  storage: Storage;
  users: ReturnType<typeof createUsersModule>['users'];
  usersRepository: ReturnType<typeof createUsersModule>['repository'];
  apiKeys: ReturnType<typeof createApiKeysModule>['apiKeys'];
  /** the links' moderation service, opened on first use (it reads BLOCKED_HOSTS_FILE as a server does) */
  moderation(): Promise<LinkModeration>;
  /** clears every domain fallback to a host BLOCKED_HOSTS_FILE blocks (SPEC §25); how many */
  clearBlockedFallbacks(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Who the CLI acts as: an admin that is no account (id 0 matches no user), so that an operator resetting
 * an admin's password is "an admin changing another user's" (no current password needed, SPEC §12).
 */
export const OPERATOR: Caller = { userId: 0, role: 'admin', status: 'active', jti: '', exp: Number.POSITIVE_INFINITY, apiKey: null };

/** The modules' logger, for what they log outside a request: warnings and errors reach stderr. */
export function warningsLogger(warn: (line: string) => void): FastifyBaseLogger {
  const say = (level: string) => (...args: unknown[]) => {
    const text = args.filter((a) => typeof a === 'string').join(' ');
    const err = args.find((a): a is { err: Error } => typeof a === 'object' && a !== null && (a as { err?: unknown }).err instanceof Error);
    warn(`${level}: ${text}${err ? ` (${err.err.message})` : ''}`);
  };
  const quiet = () => undefined;
  const logger = { level: 'warn', fatal: say('fatal'), error: say('error'), warn: say('warning'), info: quiet, debug: quiet, trace: quiet, silent: quiet, child: () => logger };
  return logger as unknown as FastifyBaseLogger;
}

/** Opens the configured database, brings its schema up to date (as a server start does) and builds the services. */
export async function openServices(config: Config, warn: (line: string) => void): Promise<CliServices> {
  const storage = createStorage(config);
  try {
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  } catch (err) {
    await storage.close();
    throw err;
  }
  const jwtSecret = loadJwtSecret(config.jwtSecret, config.dataDir);
  const paginator = deploymentPaginator(jwtSecret);
  const clock = systemClock;
  const usersModule = createUsersModule({ db: storage.db, dialect: storage.dialect, paginator, clock, passwordHashCost: config.passwordHashCost, registration: config.registration });
  const log = warningsLogger(warn);
  const apiKeysModule = createApiKeysModule({
    db: storage.db, dialect: storage.dialect, users: usersModule.repository, jwtSecret, clock, paginator, log,
  });
  let moderation: Promise<LinkModeration> | null = null;
  let blocked: Promise<BlockedHosts> | null = null;
  const blockedHosts = () => (blocked ??= loadBlockedHosts(config.blockedHostsFile, log));
  return {
    storage,
    users: usersModule.users,
    usersRepository: usersModule.repository,
    apiKeys: apiKeysModule.apiKeys,
    moderation: () =>
      (moderation ??= blockedHosts().then((list) => openLinkModeration({ config, storage, paginator, clock, blockedHosts: list }))),
    clearBlockedFallbacks: async () =>
      clearBlockedFallbacks({ db: storage.db, dialect: storage.dialect, paginator, clock }, await blockedHosts()),
    close: async () => {
      await apiKeysModule.close?.();
      await storage.close();
    },
  };
}
