/**
 * The platform features' modules (SPEC §22–§24): webhooks, destination checks, single sign-on, each built from
 * what the composition root (app-modules.ts) hands it.
 */
import { packageVersion } from './cli/package-info.js';
import type { createCoreModules, ModuleDeps } from './app-core-modules.js';
import type { Metrics } from './infra/metrics.js';
import type { OutboundHttp } from './infra/outbound-http.js';
import type { LinksModule } from './modules/links/index.js';
import type { RedirectModule } from './modules/redirect/index.js';

/** What these builders take of the composition root's dependencies (app-modules.ts passes its own). */
type PlatformDeps = ModuleDeps & { server: { metrics: Metrics; busy: () => boolean } | null };
type LinkCheckParts = { linkChecks?: { outbound?: OutboundHttp; sliceMs?: number } };
type LinkParts = { linksModule: LinksModule; redirectModule: RedirectModule | null | undefined };
import type { Paginator } from './lib/pagination.js';
import { createLinkChecksModule } from './modules/link-checks/index.js';
import { createOidcModule } from './modules/oidc/index.js';
import { createWebhooksModule } from './modules/webhooks/index.js';

/** Webhooks (SPEC §22): the resource for every process; its dispatcher is started by a server only (app.ts). */
export function webhooksModuleFor(
  { config, storage, clock, jwtSecret, log, server }: PlatformDeps,
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
    ...(server ? { metrics: server.metrics, busy: server.busy } : {}),
  });
}

/**
 * SPEC §24's destination checks, for a server (the CLI checks nothing): the link as v1 shows it for the events,
 * the redirect's cache to drop a link whose status changed, the links module's name in the outbox.
 */
export function linkChecksModuleFor(
  { config, storage, clock, log }: ModuleDeps,
  server: LinkCheckParts,
  { linksModule, redirectModule }: LinkParts,
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
  { config, storage, clock, jwtSecret }: ModuleDeps,
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
