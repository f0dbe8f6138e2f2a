/**
 * The link-checks module's public face (SPEC §24): the checks of links' destinations, their health and its
 * events. It reads and writes links' health columns itself and reaches the links module through its index.ts
 * only (the v1 representation, the VisitCache port).
 */
export { createLinkChecksModule, type LinkChecksModule, type LinkChecksModuleDeps } from './link-checks.module.js';
export { CHECK_DEADLINE_MS, CHECK_MAX_BODY_BYTES, CHECK_MAX_REDIRECTS } from './link-checker.js';
