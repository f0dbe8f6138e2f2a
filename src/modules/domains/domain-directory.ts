import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { Paginator } from '../../lib/pagination.js';
import type { ClaimViewer } from './domain-claims.js';
import { DomainRegistry, toEntry, type DomainEntry } from './domain-registry.js';
import { createDomainsRepository } from './domains.repository.js';

/**
 * What other modules read of domains, the one shape of it (the app's, domains.module.ts; the CLI's,
 * openDomainDirectory): the registry — links name a link's domain with it, the redirect the domain a visit's
 * host names — and a reload of a domain made elsewhere a moment ago.
 */
export interface DomainDirectory {
  byIdOf(id: number): DomainEntry | undefined;
  named(hostname: string, viewer: ClaimViewer | null): DomainEntry | undefined;
  /** the verified domain a visit's host names (one Map lookup), or undefined for the default domain */
  servedBy(host: string | undefined): DomainEntry | undefined;
  reload(id: number): Promise<void>;
  reloadHostname(hostname: string): Promise<void>;
}

/**
 * The domains outside the app (the CLI's link moderation): every domain read once from the database, so that a
 * link's short URL and `domain` are the API's. Nothing here changes a domain, so it announces nothing.
 */
export async function openDomainDirectory(deps: { db: Kysely<Database>; dialect: Dialect; paginator: Paginator }): Promise<DomainDirectory> {
  const repository = createDomainsRepository(deps.db, deps.dialect, deps.paginator, 'directory');
  const registry = new DomainRegistry();
  registry.replaceAll((await repository.all()).map(toEntry));
  return {
    byIdOf: (id) => registry.byIdOf(id),
    named: (hostname, viewer) => registry.named(hostname, viewer),
    servedBy: (host) => registry.servedBy(host),
    reload: async (id) => {
      const row = await repository.findById(id);
      if (row) registry.put(toEntry(row));
    },
    reloadHostname: async (hostname) => {
      for (const row of await repository.claimsOf(hostname)) registry.put(toEntry(row));
    },
  };
}
