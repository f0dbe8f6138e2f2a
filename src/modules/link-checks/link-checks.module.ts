import type { FastifyBaseLogger } from 'fastify';
import { appModule } from '../../app-module.js';
import type { Config } from '../../config.js';
import type { Storage } from '../../db/database.js';
import type { LinkRow } from '../../db/types.js';
import { createOutboundHttp, type OutboundHttp } from '../../infra/outbound-http.js';
import type { Clock } from '../../lib/clock.js';
import type { VisitCache } from '../links/index.js';
import { createLinkChecker } from './link-checker.js';
import { createLinkChecksRepository, namesOfLink } from './link-checks.repository.js';

/** How often the checks' job is tried: a slice follows the last one within this, on whichever instance. */
const JOB_EVERY_MS = 1_000;

export interface LinkChecksModuleDeps {
  config: Pick<
    Config,
    | 'linkChecks'
    | 'linkCheckIntervalHours'
    | 'linkChecksPerMinute'
    | 'linkCheckAllowPrivate'
    | 'publicBaseUrl'
    | 'dnsServers'
  >;
  storage: Pick<Storage, 'db' | 'dialect'>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** this package's version, for the user agent */
  version: string;
  /** the link as the v1 API shows it (the links service's toLink): the event's data */
  toLink: (row: LinkRow) => object;
  /** this instance's redirect cache: a link whose status changed leaves it */
  cache: VisitCache;
  /** this instance's name in the outbox (the links module's) */
  changeOrigin: string;
  /** the outbound requests (default: one of its own, on DNS_SERVERS); tests pass one with their resolver */
  outbound?: OutboundHttp;
  /** how long one run of the job starts checks (default 30 s) */
  sliceMs?: number;
}

/**
 * SPEC §24's destination checks: the `link-checks` job (one instance at a time, infra/job-runner.ts), each run a
 * slice of checks at LINK_CHECKS_PER_MINUTE, one per host at a time (link-checker.ts). No job when LINK_CHECKS is
 * false: links keep their last health.
 */
export function createLinkChecksModule(deps: LinkChecksModuleDeps) {
  const { config, storage, clock, log } = deps;
  const repository = createLinkChecksRepository({
    db: storage.db,
    dialect: storage.dialect,
    changeOrigin: deps.changeOrigin,
    toLink: deps.toLink,
  });
  const checker = createLinkChecker({
    repository,
    outbound: deps.outbound ?? createOutboundHttp({ dnsServers: config.dnsServers }),
    clock,
    log: log.child({ job: 'link-checks' }),
    intervalMs: Math.round(config.linkCheckIntervalHours * 3_600_000),
    perMinute: config.linkChecksPerMinute,
    allowPrivate: config.linkCheckAllowPrivate,
    userAgent: `Ferry-LinkCheck/${deps.version} (+${config.publicBaseUrl})`,
    ...(deps.sliceMs !== undefined ? { sliceMs: deps.sliceMs } : {}),
    onStatusChange: (row) => deps.cache.forgetNames(row.domain_id, namesOfLink(row)),
  });
  return appModule({
    checker,
    schemas: [],
    jobs: config.linkChecks
      ? [{ name: 'link-checks', everyMs: JOB_EVERY_MS, run: (signal?: AbortSignal) => checker.slice(signal) }]
      : [],
  });
}

export type LinkChecksModule = ReturnType<typeof createLinkChecksModule>;
