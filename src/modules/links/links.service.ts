import type { Dialect } from '../../db/dialect.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import type { PasswordHasher, UsersRepository } from '../users/index.js';
import type { HostBlocklist } from '../../lib/host-blocklist.js';
import { assertMayCreateLink } from './link-access.js';
import { createLinkDomains, type LinkDomainsDeps } from './link-domains.js';
import { createLinkInput } from './link-input.js';
import { createLinkReads, createLiveLinkFinder } from './link-reads.js';
import { linkRecord } from './link-record.js';
import { createLinkRulesService } from './link-rules.js';
import { createLinkCreation, createLinkEditing, createLinkRetirement } from './link-writes.js';
import type { LinksRepository } from './links.repository.js';
import type { VisitCache } from './visit-cache.js';
import { generateCode } from './short-code.js';

export { linkEtag, type LinkWriteOptions } from './link-writes.js';

export interface LinksServiceDeps {
  links: LinksRepository;
  users: Pick<UsersRepository, 'findById'>;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
  paginator: Paginator;
  /** this instance's redirect cache (modules/redirect): a changed link's names leave it */
  cache: VisitCache;
  publicBaseUrl: string;
  /** the port the service listens on: a loopback URL on it is this service (original-url.ts) */
  listenPort?: number;
  passwords: Pick<PasswordHasher, 'hash'>;
  /** ANONYMOUS_LINKS: whether a creation without a credential is allowed (default: yes) */
  anonymousLinks?: boolean;
  /** BLOCKED_HOSTS_FILE's list: targets on these hosts are refused (default: none) */
  blockedHosts?: HostBlocklist;
  /** the code source; tests pass a rigged one to force collisions */
  generate?: () => string;
  /** the domains links live on (SPEC §19): names, owners, short URLs; default: none but the default domain */
  domains?: LinkDomainsDeps['registry'];
}

export type LinksService = ReturnType<typeof createLinksService>;

const NO_DOMAINS: LinkDomainsDeps['registry'] = {
  byIdOf: () => undefined,
  named: () => undefined,
  reload: async () => undefined,
  reloadHostname: async () => undefined,
};

export function createLinksService(deps: LinksServiceDeps) {
  const { links, users, dialect, clock, paginator, cache, publicBaseUrl } = deps;
  const anonymousLinks = deps.anonymousLinks ?? true;
  const domains = createLinkDomains({ registry: deps.domains ?? NO_DOMAINS, publicBaseUrl, clock });
  const input = createLinkInput({
    publicBaseUrl,
    passwords: deps.passwords,
    ...(deps.listenPort !== undefined ? { listenPort: deps.listenPort } : {}),
    ...(deps.blockedHosts ? { blockedHosts: deps.blockedHosts } : {}),
  });
  const toLink = linkRecord(publicBaseUrl, domains);
  const assertMayCreate = (caller: Caller | null): void => assertMayCreateLink(caller, anonymousLinks);
  const findLive = createLiveLinkFinder({ links, domains, clock });
  const generate = deps.generate ?? (() => generateCode());
  const { prepare, create } = createLinkCreation({
    links,
    dialect,
    clock,
    cache,
    domains,
    input,
    generate,
    assertMayCreate,
  });
  const { get, qr, getForOwner, getForStats, listForUser } = createLinkReads({
    links,
    users,
    domains,
    clock,
    paginator,
    findLive,
    toLink,
  });
  const { patch } = createLinkEditing({ links, dialect, clock, cache, domains, input, findLive });
  const { remove, sweepExpired } = createLinkRetirement({ links, clock, cache, findLive });
  const { getRules, putRules, evaluate } = createLinkRulesService({ links, input, clock, cache, findLive });

  return {
    toLink,
    /** the domains links live on, as the links module sees them (the admin list and the statistics filter by them) */
    domains,
    assertMayCreate,
    prepare,
    create,
    get,
    qr,
    getForOwner,
    patch,
    remove,
    getForStats,
    listForUser,
    sweepExpired,
    getRules,
    putRules,
    evaluateRules: evaluate,
  };
}
