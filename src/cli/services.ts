import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { createModules, type Modules } from '../app-modules.js';
import type { Config } from '../config.js';
import { createStorage, type Storage } from '../db/database.js';
import { migrateToLatest } from '../db/migrator.js';
import { type BlockedHosts, loadBlockedHosts } from '../infra/blocked-hosts-file.js';
import type { Caller } from '../lib/caller.js';
import { systemClock } from '../lib/clock.js';
import { CLI_PACE } from '../modules/imports/index.js';
import { loadJwtSecret } from '../modules/tokens/index.js';
import { createSharedState, type SharedState } from '../shared-state.js';

/**
 * The services the CLI works through: the server's modules, built by the same function (app-modules.ts
 * createModules) from the same configuration, so that every rule the API enforces holds for the operator too.
 * Without what only a server has: no HTTP, no click pipeline (the CLI never serves a visit), no Redis, no jobs.
 */
export interface CliServices {
  storage: Storage;
  users: Modules['usersModule']['users'];
  usersRepository: Modules['usersModule']['repository'];
  apiKeys: Modules['apiKeysModule']['apiKeys'];
  /** two-factor sign-in: `ferry users reset-2fa` */
  twoFactor: Modules['twoFactorModule']['twoFactor'];
  /** the links' moderation service */
  moderation: Modules['linksModule']['moderation'];
  /** the imports service, at the CLI's pace (CLI_PACE) */
  imports: Modules['importsModule']['imports'];
  /** clears every domain fallback to a host BLOCKED_HOSTS_FILE blocks (SPEC §25); how many */
  clearBlockedFallbacks(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Who the CLI acts as: an admin that is no account (id 0 matches no user), so that an operator resetting
 * an admin's password is "an admin changing another user's" (no current password needed, SPEC §12).
 */
export const OPERATOR: Caller = {
  userId: 0,
  role: 'admin',
  status: 'active',
  jti: '',
  exp: Number.POSITIVE_INFINITY,
  apiKey: null,
};

/** The modules' logger, for what they log outside a request: warnings and errors reach stderr. */
export function warningsLogger(warn: (line: string) => void): FastifyBaseLogger {
  const say =
    (level: string) =>
    (...args: unknown[]) => {
      const text = args.filter((a) => typeof a === 'string').join(' ');
      const err = args.find(
        (a): a is { err: Error } =>
          typeof a === 'object' && a !== null && (a as { err?: unknown }).err instanceof Error,
      );
      warn(`${level}: ${text}${err ? ` (${err.err.message})` : ''}`);
    };
  const quiet = () => undefined;
  const logger = {
    level: 'warn',
    fatal: say('fatal'),
    error: say('error'),
    warn: say('warning'),
    info: quiet,
    debug: quiet,
    trace: quiet,
    silent: quiet,
    child: () => logger,
  };
  return logger as unknown as FastifyBaseLogger;
}

/**
 * Opens the configured database, brings its schema up to date (as a server start does) and builds the modules.
 * BLOCKED_HOSTS_FILE is read as a server reads it: a file that cannot be read stops the command.
 */
export async function openServices(config: Config, warn: (line: string) => void): Promise<CliServices> {
  const log = warningsLogger(warn);
  const blockedHosts = await loadBlockedHosts(config.blockedHostsFile, log);
  let storage: Storage | undefined;
  let shared: SharedState | undefined;
  try {
    storage = createStorage(config, warn);
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
    const clock = systemClock;
    shared = await createSharedState({ config, storage, redis: null, clock, log });
    const jwtSecret = loadJwtSecret(config.jwtSecret, config.dataDir);
    const modules = await createModules({
      config,
      storage,
      shared,
      clock,
      jwtSecret,
      log,
      blockedHosts,
      server: null,
      importPace: CLI_PACE,
    });
    return servicesOf(modules, { storage, shared, blockedHosts });
  } catch (err) {
    // nothing opened here may outlive a failed start: a watcher or a pool would keep the command from exiting
    await shared?.close();
    blockedHosts.close();
    await storage?.close();
    throw err;
  }
}

function servicesOf(
  modules: Modules,
  opened: { storage: Storage; shared: SharedState; blockedHosts: BlockedHosts },
): CliServices {
  const { storage, shared, blockedHosts } = opened;
  return {
    storage,
    users: modules.usersModule.users,
    usersRepository: modules.usersModule.repository,
    apiKeys: modules.apiKeysModule.apiKeys,
    twoFactor: modules.twoFactorModule.twoFactor,
    moderation: modules.linksModule.moderation,
    imports: modules.importsModule.imports,
    clearBlockedFallbacks: () => modules.domainsModule.clearBlockedFallbacks(),
    close: async () => {
      for (const m of [...modules.list].reverse()) await m.close?.();
      await shared.close();
      blockedHosts.close();
      await storage.close();
    },
  };
}
