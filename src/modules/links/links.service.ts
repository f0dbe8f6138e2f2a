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
import { createLinkCreation, createLinkEditing, createLinkRetirement } from './link-writes.js';
import { linkCacheKey, type LinkCache, type RedirectTarget } from './link-cache.js';
import type { CodeLookup, LinksRepository } from './links.repository.js';
import { toTarget } from './redirect-target.js';
import { generateCode } from './short-code.js';

export { linkEtag, type LinkWriteOptions } from './link-writes.js';

export interface LinksServiceDeps {
  links: LinksRepository;
  users: Pick<UsersRepository, 'findById'>;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
  paginator: Paginator;
  cache: LinkCache;
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

const EXPIRED: RedirectTarget = { kind: 'expired' };
const NO_DOMAINS: LinkDomainsDeps['registry'] = {
  byIdOf: () => undefined, named: () => undefined, reload: async () => undefined, reloadHostname: async () => undefined,
};

/**
 * The redirect's lookup: the cache answers synchronously; a miss asks the database once and caches the
 * answer, negative ones included. Expiry is judged here on every call against the clock, not by the
 * cache, so a link stops redirecting at its expires_at exactly, sweep or no sweep.
 */
function createRedirectResolver(deps: { links: Pick<LinksRepository, 'lookupCode'>; cache: Pick<LinkCache, 'get' | 'set' | 'epoch'>; clock: Clock }) {
  const { links, cache, clock } = deps;
  const checkExpiry = (t: RedirectTarget): RedirectTarget =>
    t.kind === 'link' && t.expiresAt !== null && t.expiresAt <= clock.now() ? EXPIRED : t;
  return (code: string, domainId = 0): RedirectTarget | Promise<RedirectTarget> => {
    // `code` may be an alias: one namespace, one lookup, one cache entry per name (SPEC §20).
    const key = linkCacheKey(domainId, code);
    const hit = cache.get(key);
    if (hit) return checkExpiry(hit);
    const epoch = cache.epoch();
    const found = links.lookupCode(code, domainId);
    const store = (f: CodeLookup | undefined): RedirectTarget => {
      const target = toTarget(code, f);
      cache.set(key, target, epoch);
      return checkExpiry(target);
    };
    return found instanceof Promise ? found.then(store) : store(found);
  };
}

export function createLinksService(deps: LinksServiceDeps) {
  const { links, users, dialect, clock, paginator, cache, publicBaseUrl } = deps;
  const anonymousLinks = deps.anonymousLinks ?? true;
  const domains = createLinkDomains({ registry: deps.domains ?? NO_DOMAINS, publicBaseUrl, clock });
  const input = createLinkInput({
    publicBaseUrl, passwords: deps.passwords, ...(deps.listenPort !== undefined ? { listenPort: deps.listenPort } : {}),
    ...(deps.blockedHosts ? { blockedHosts: deps.blockedHosts } : {}),
  });
  const toLink = linkRecord(publicBaseUrl, domains);
  const assertMayCreate = (caller: Caller | null): void => assertMayCreateLink(caller, anonymousLinks);
  const findLive = createLiveLinkFinder({ links, domains, clock });
  const generate = deps.generate ?? (() => generateCode());
  const { prepare, create } = createLinkCreation({ links, dialect, clock, cache, domains, input, generate, assertMayCreate });
  const { get, qr, getForOwner, getForStats, listForUser } = createLinkReads({ links, users, domains, clock, paginator, findLive, toLink });
  const { patch } = createLinkEditing({ links, dialect, clock, cache, domains, input, findLive });
  const { remove, sweepExpired } = createLinkRetirement({ links, clock, cache, findLive });

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
    resolve: createRedirectResolver({ links, cache, clock }),
    sweepExpired,
  };
}
