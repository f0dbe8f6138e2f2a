import type { ClaimViewer } from './domain-claims.js';
import type { DomainEntry } from './domain-registry.js';

/**
 * What other modules read of domains, the one shape of it (domains.module.ts `directory`): the registry — links
 * name a link's domain with it, the redirect the domain a visit's host names — and a reload of a domain made
 * elsewhere a moment ago.
 */
export interface DomainDirectory {
  byIdOf(id: number): DomainEntry | undefined;
  named(hostname: string, viewer: ClaimViewer | null): DomainEntry | undefined;
  /** the verified domain a visit's host names (one Map lookup), or undefined for the default domain */
  servedBy(host: string | undefined): DomainEntry | undefined;
  reload(id: number): Promise<void>;
  reloadHostname(hostname: string): Promise<void>;
}
