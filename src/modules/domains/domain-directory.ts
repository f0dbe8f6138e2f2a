import type { ClaimViewer } from './domain-claims.js';
import type { DomainEntry } from './domain-registry.js';

/** What the links module reads of domains: the registry, and a reload of a domain made elsewhere a moment ago. */
export interface DomainDirectory {
  byIdOf(id: number): DomainEntry | undefined;
  named(hostname: string, viewer: ClaimViewer | null): DomainEntry | undefined;
  reload(id: number): Promise<void>;
  reloadHostname(hostname: string): Promise<void>;
}
