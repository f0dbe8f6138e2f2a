import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { Paginator } from '../../lib/pagination.js';
import type { ClaimViewer } from './domain-claims.js';
import { DomainRegistry, toEntry, type DomainEntry } from './domain-registry.js';
import { createDomainsRepository } from './domains.repository.js';

/** What the links module reads of domains: the registry, and a reload of a domain made elsewhere a moment ago. */
export interface DomainDirectory {
  byIdOf(id: number): DomainEntry | undefined;
  named(hostname: string, viewer: ClaimViewer | null): DomainEntry | undefined;
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
    reload: async (id) => {
      const row = await repository.findById(id);
      if (row) registry.put(toEntry(row));
    },
    reloadHostname: async (hostname) => {
      for (const row of await repository.claimsOf(hostname)) registry.put(toEntry(row));
    },
  };
}
