/**
 * The platform features' modules (SPEC §22–§24): webhooks, destination checks, single sign-on, each built from
 * what the composition root (app-modules.ts) hands it.
 */
import { packageVersion } from './cli/package-info.js';
import type { createCoreModules } from './app-core-modules.js';
import type { LinkModules, ModulesDeps, ServerParts } from './app-modules.js';
import type { Paginator } from './lib/pagination.js';
import { createLinkChecksModule } from './modules/link-checks/index.js';
import { createOidcModule } from './modules/oidc/index.js';
import { createWebhooksModule } from './modules/webhooks/index.js';

/** Webhooks (SPEC §22): the resource for every process; its dispatcher is started by a server only (app.ts). */
export function webhooksModuleFor(
  { config, storage, clock, jwtSecret, log, server }: ModulesDeps,
  paginator: Paginator,
) {
  return createWebhooksModule({
    db: storage.db,
    dialect: storage.dialect,
    clock,
    paginator,
    instanceSecret: jwtSecret,
    log,
    allowPrivate: config.webhookAllowPrivate,
    concurrency: config.webhookConcurrency,
    dnsServers: config.dnsServers,
    userAgent: `Ferry-Webhooks/${packageVersion()}`,
    ...(server ? { metrics: server.metrics } : {}),
  });
}

/**
 * SPEC §24's destination checks, for a server (the CLI checks nothing): the link as v1 shows it for the events,
 * the redirect's cache to drop a link whose status changed, the links module's name in the outbox.
 */
export function linkChecksModuleFor(
  { config, storage, clock, log }: ModulesDeps,
  server: ServerParts,
  { linksModule, redirectModule }: LinkModules,
) {
  return createLinkChecksModule({
    config,
    storage,
    clock,
    log,
    version: packageVersion(),
    toLink: linksModule.links.toLink,
    cache: redirectModule?.cache ?? { forgetNames: () => undefined },
    changeOrigin: linksModule.changeOrigin,
    ...server.linkChecks,
  });
}

/** Single sign-on (SPEC §23): a serving process's browser routes, signing in through the core's accounts and tokens. */
export function oidcModuleFor(
  { config, storage, clock, jwtSecret }: ModulesDeps,
  core: ReturnType<typeof createCoreModules>,
) {
  return createOidcModule({
    config,
    db: storage.db,
    dialect: storage.dialect,
    users: core.usersModule.repository,
    passwords: core.usersModule.passwords,
    loginCodes: core.tokensModule.loginCodes,
    jwtSecret,
    clock,
  });
}
