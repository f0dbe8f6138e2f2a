import type { Dialect } from '../../db/dialect.js';
import type { DomainRow } from '../../db/types.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { HostBlocklist } from '../../lib/host-blocklist.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import type { UsersRepository } from '../users/index.js';
import { findManagedDomain } from './domain-access.js';
import { domainRecord } from './domain-record.js';
import { toEntry, type DomainRegistry } from './domain-registry.js';
import type { DomainChecker } from './domain-verification.js';
import { createDomainProofs } from './domains.proofs.js';
import type { DomainsRepository } from './domains.repository.js';
import { DOMAIN_SORT_COLUMNS, type Domain, type DomainListQueryT } from './domains.schemas.js';
import { createDomainWrites } from './domains.writes.js';

export interface DomainsServiceDeps {
  domains: DomainsRepository;
  registry: DomainRegistry;
  users: Pick<UsersRepository, 'findById'>;
  checker: DomainChecker;
  dialect: Pick<Dialect, 'isUniqueViolation'>;
  clock: Clock;
  paginator: Paginator;
  /** the default domain's host (PUBLIC_BASE_URL's): never a domain of its own */
  defaultHost: string;
  /** BLOCKED_HOSTS_FILE's list (fallbacks are checked against it); default: nothing blocked */
  blockedHosts?: HostBlocklist;
}

function createDomainReads(deps: {
  domains: Pick<DomainsRepository, 'findById' | 'list'>;
  paginator: Paginator;
  toDomain: (row: DomainRow) => Domain;
}) {
  const { domains, paginator, toDomain } = deps;
  return {
    get: (id: number, caller: Caller): Promise<DomainRow> => findManagedDomain(domains, id, caller),

    async list(
      caller: Caller,
      query: DomainListQueryT,
      requestUrl: string,
      cursorOnly: boolean,
    ): Promise<PageResult<Domain>> {
      const ownerId = isAdmin(caller) ? (query.owner_id ?? null) : caller.userId;
      const only = caller.apiKey?.domains ?? null;
      const list = paginator.resolve(query, DOMAIN_SORT_COLUMNS, { owner: ownerId, only }, cursorOnly);
      const { rows, total } = await domains.list(ownerId, list, only);
      return paginator.page(rows, list, total, requestUrl, toDomain, (r) => r[list.sortColumn as 'id' | 'created_at']);
    },
  };
}

/** The registry following the table: at start-up, and after changes this instance did not make. */
function createRegistryReloads(deps: {
  domains: Pick<DomainsRepository, 'all' | 'findById' | 'claimsOf'>;
  registry: Pick<DomainRegistry, 'replaceAll' | 'put' | 'remove'>;
}) {
  const { domains, registry } = deps;
  const reloads = new Map<number, number>();
  return {
    /** Loads every domain into the registry (start-up, and after the change feed was cut off). */
    async reloadAll(): Promise<void> {
      registry.replaceAll((await domains.all()).map(toEntry));
    },

    /** The claims of a name another instance added a moment ago, before their change messages arrived here. */
    async reloadHostname(hostname: string): Promise<void> {
      for (const row of await domains.claimsOf(hostname)) registry.put(toEntry(row));
    },

    /** Follows a change another instance made. */
    async reload(id: number): Promise<void> {
      // Two changes of one domain heard in a row: only the reload started last may write.
      const turn = (reloads.get(id) ?? 0) + 1;
      reloads.set(id, turn);
      const row = await domains.findById(id);
      if (reloads.get(id) !== turn) return;
      reloads.delete(id);
      if (row) registry.put(toEntry(row));
      else registry.remove(id);
    },
  };
}

export type DomainsService = ReturnType<typeof createDomainsService>;

/** SPEC §19: the domains resource, its verification and daily re-check, and the registry that mirrors it. */
export function createDomainsService(deps: DomainsServiceDeps) {
  const { clock, registry } = deps;
  const toDomain = (row: DomainRow): Domain => domainRecord(row, clock.now());
  return {
    toDomain,
    registry,
    ...createDomainReads({ ...deps, toDomain }),
    ...createDomainWrites(deps),
    ...createDomainProofs(deps),
    ...createRegistryReloads(deps),
  };
}
