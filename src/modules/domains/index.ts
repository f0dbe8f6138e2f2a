/**
 * The domains module's public face (SPEC §19, §25). Links resolve a link's domain and a visit's host through
 * the registry; the importer finds or claims a domain by host name with findDomainFor and claimDomain; nothing else of this module crosses its border.
 */
export { createDomainsModule, type DomainsModule, type DomainsModuleDeps } from './domains.module.js';
export { DomainRegistry, type DomainEntry, STOP_AFTER_FAILING_MS } from './domain-registry.js';
export { normalizeHostname } from './hostname.js';
export type { DomainDirectory } from './domain-directory.js';
export { claimDomain, findDomainFor, SYSTEM_VIEWER, type ClaimViewer } from './domain-claims.js';
